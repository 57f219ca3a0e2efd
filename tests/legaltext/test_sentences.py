"""How a statute's text is cut into the sentences the writer quotes and ingest embeds (legaltext/sentences.py)."""

from __future__ import annotations

from legaltext.sentences import conduct, meaning_sentences, split_sentences

# КК ст. 125 as the corpus prints it: each part's conduct, a dash, and the sanction on the next line
LIGHT_INJURY = (
    "1. Умисне легке тілесне ушкодження -\n"
    "карається штрафом до п'ятдесяти неоподатковуваних мінімумів доходів громадян або громадськими роботами на "
    "строк до двохсот годин.\n"
    "2. Умисне легке тілесне ушкодження, що спричинило короткочасний розлад здоров'я, -\n"
    "карається штрафом від п’ятдесяти до ста неоподатковуваних мінімумів доходів громадян.")
# КУпАП ст. 122-4: the administrative code's sanction is «тягне за собою»
LEFT_THE_SCENE = (
    "Залишення водіями транспортних засобів місця дорожньо-транспортної пригоди, до якої вони причетні, -\n"
    "тягне за собою накладення штрафу в розмірі двохсот неоподатковуваних мінімумів доходів громадян.")


def test_an_offence_and_its_sanction_are_one_sentence() -> None:
    assert split_sentences(LIGHT_INJURY) == [
        "Умисне легке тілесне ушкодження - карається штрафом до п'ятдесяти неоподатковуваних мінімумів доходів "
        "громадян або громадськими роботами на строк до двохсот годин.",
        "Умисне легке тілесне ушкодження, що спричинило короткочасний розлад здоров'я, - карається штрафом від "
        "п’ятдесяти до ста неоподатковуваних мінімумів доходів громадян.",
    ]
    (only,) = split_sentences(LEFT_THE_SCENE)
    assert only.startswith("Залишення водіями") and "-  тягне" not in only and "- тягне за собою накладення" in only


def test_plural_sanctions_join_too() -> None:
    text = ("Ті самі дії, вчинені повторно, -\nтягнуть за собою накладення штрафу.\n"
            "Ті самі дії, вчинені групою осіб, -\nкараються позбавленням волі на строк до п'яти років.")

    assert [s.split(" - ")[1].split()[0] for s in split_sentences(text)] == ["тягнуть", "караються"]


def test_a_dash_right_after_a_comma_joins_its_sanction_too() -> None:
    # КУпАП ст. 127, part three, as the corpus prints it: no space between the comma and the dash
    text = ("Ті самі порушення, вчинені особами, які перебувають у стані сп'яніння,-\n"
            "тягнуть за собою накладення штрафу в розмірі сорока неоподатковуваних мінімумів доходів громадян.")

    (only,) = split_sentences(text)
    assert only.startswith("Ті самі порушення") and "сп'яніння,- тягнуть за собою" in only
    assert meaning_sentences(text, max_sentences=5, max_chars=400) == [
        "Ті самі порушення, вчинені особами, які перебувають у стані сп'яніння,-"]


def test_a_line_ending_in_a_dash_stays_apart_from_anything_but_a_sanction() -> None:
    # a list opened by a dash, and a dash at the very end, are not an offence
    text = ("Відпустка надається таким працівникам -\nпрацівникам, молодшим вісімнадцяти років.\n"
            "Останнє речення закінчується тире -")

    assert split_sentences(text) == ["Відпустка надається таким працівникам -",
                                     "працівникам, молодшим вісімнадцяти років.",
                                     "Останнє речення закінчується тире -"]


def test_a_sanction_word_inside_a_sentence_splits_nothing_new() -> None:
    # «карається» starting a line without a dash before it is a sentence of its own, as before
    text = "Порушення правил тягне відповідальність.\nкарається за законом окремо в кожному випадку."

    assert split_sentences(text) == ["Порушення правил тягне відповідальність.",
                                     "карається за законом окремо в кожному випадку."]


def test_the_meaning_model_reads_an_offence_up_to_its_sanction() -> None:
    # the sanction is worded alike in every article of its code: the vector is of what was done
    assert meaning_sentences(LEFT_THE_SCENE, max_sentences=5, max_chars=400) == [
        "Залишення водіями транспортних засобів місця дорожньо-транспортної пригоди, до якої вони причетні, -"]
    assert conduct("Інше речення без санкції - як є.") == "Інше речення без санкції - як є."
