"""The lay-terms thesaurus (legaltext/lay_terms.py, entries in lay_terms.tsv): a lay phrase matches the forms people
write, the statute's words come out, and a word with another sense is left alone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legaltext import lay_terms
from legaltext.lay_terms import (
    DATA_FILE,
    LAY_TERMS,
    concepts,
    expansion_phrases,
    expansions,
    lay_phrases,
    read_terms,
    with_statutory_words,
)
from legaltext.text import content_lemmas, content_readings

EXPANDS = [
    pytest.param("Мене звільнили, коли я був на больнічному", {"тимчасовий", "непрацездатність"},
                 id="surzhyk-sick-leave"),
    pytest.param("Мене мобілізували, а я ФОП", {"призов", "мобілізація", "підприємець"}, id="mobilised-fop"),
    pytest.param("Прийшла повістка з ТЦК", {"комплектування"}, id="tck-abbreviation"),
    pytest.param("Чи можуть оштрафувати за матюки?", {"штраф", "нецензурний", "лайка", "хуліганство"}, id="swearing"),
    pytest.param("Помилково переказала гроші на чужу картку", {"безпідставно", "набутий"}, id="mistaken-transfer"),
    pytest.param("Чи можуть мене виписать з квартири?", {"користування", "жилий", "приміщення"},
                 id="deregister-inflected"),
    pytest.param("Поліцейський наділи наручники без причини", {"кайданки"}, id="handcuffs"),
    pytest.param("Скільки днів відпуски мені положено?", {"відпустка"}, id="russism-leave"),
    pytest.param("Чи можна отримати землю безкоштовно?", {"безоплатно"}, id="free-of-charge"),
    pytest.param("Скільки платять за переробки?", {"надурочний"}, id="overtime"),
    pytest.param("Чи можуть забрати машину для армії?", {"примусовий", "відчуження"}, id="requisition"),
    pytest.param("Майно записане на мого чоловіка", {"подружжя"}, id="my-husband"),
    pytest.param("Чи можна звільнитися під час війни без відпрацювання?", {"воєнний"}, id="during-the-war"),
    pytest.param("Який термін розгляду скарги?", {"строк"}, id="time-limit"),
    pytest.param("Мене розвели на гроші в інтернеті", {"шахрайство"}, id="scammed"),
    pytest.param("Роботодавець не дає розрахунковий листок", {"повідомлення", "розшифровка", "утримання"},
                 id="payslip"),
    pytest.param("Працюю без оформлення вже пів року", {"допущений", "укладення", "наказ"}, id="unregistered-work"),
    pytest.param("Мене били у відділку, щоб я зізнався", {"катування", "поводження"}, id="beaten-by-police"),
    pytest.param("Дружину змушують свідчити проти чоловіка", {"відмова", "показання", "родич"},
                 id="testify-against-family"),
    pytest.param("Чи можуть громадянина вислати з країни?", {"вигнаний"}, id="exiled"),
    pytest.param("Сусід щоосені палить листя біля паркану", {"випалювання", "рослинність"}, id="burning-leaves"),
    pytest.param("Мене обрахували в магазині", {"обраховування", "обман", "покупець"}, id="short-changed"),
    pytest.param("Взяв займ у мікрофінансовій", {"позика"}, id="russism-loan-as-a-phrase"),
    pytest.param("Прийшла повістка до суду", {"судовий", "виклик"}, id="court-summons"),
    pytest.param("Його засудили заочно, поки він був за кордоном", {"спеціальний", "absentia"},
                 id="convicted-in-absentia"),
    pytest.param("Забув права вдома, а мене зупинили", {"посвідчення", "водій"}, id="licence-left-at-home"),
    pytest.param("Ми десять років жили в цивільному шлюбі", {"проживати", "сім'я"}, id="cohabiting"),
    pytest.param("Чи обов'язково відпрацьовувати два тижні?", {"попередивши", "письмово"}, id="two-weeks-notice"),
    pytest.param("Поліцейський вимагає відкрити багажник", {"поверхневий", "огляд"}, id="car-boot-search"),
    pytest.param("Тепер кажуть, що буде подвійний штраф", {"розмір", "примусовий", "виконання"}, id="double-fine"),
    pytest.param("Я не знав, що це заборонено", {"незнання", "звільнення_від"}, id="did-not-know-the-law"),
    pytest.param("Мою посаду скоротили", {"скорочення", "штат"}, id="post-cut"),
    pytest.param("Бабуся хоче бачити онука", {"внук"}, id="grandchild-russism"),
    pytest.param("Мені відмовили в прийомі на роботу через вік", {"необґрунтований", "прийняття"},
                 id="refused-a-job"),
    pytest.param("Колишній має великий борг по аліментах", {"заборгованість"}, id="alimony-arrears"),
    pytest.param("Мене незаконно звільнили, як поновитися на роботі?", {"вимушений", "прогул"}, id="reinstatement"),
    pytest.param("Я поїхав з місця аварії, бо злякався", {"залишення"}, id="left-the-scene"),
    pytest.param("Поліцейський вимагає показати документи", {"пред'явлення", "посвідчувати"}, id="show-your-papers"),
    pytest.param("Чи можна заповідати квартиру сусідці?", {"заповідач", "спадкоємець"}, id="bequeath-verb"),
    pytest.param("Мене побили, я зламав руку", {"тілесний", "ушкодження"}, id="broken-arm"),
    pytest.param("Дружина взяла кредит без моєї згоди", {"подружжя", "стягнення"}, id="a-spouses-loan"),
    pytest.param("Через тиждень відклеїлась підошва", {"недолік", "неналежний"}, id="sole-came-off"),
    pytest.param("Скільки днів на повернення товару, купленого в інтернеті?", {"відстань", "укладений"},
                 id="bought-online-participle"),
    pytest.param("Дитина розбила вікно в школі", {"малолітній", "завданий"}, id="damage-by-a-child"),
    pytest.param("Батьки розлучаються. З ким залишиться дитина?", {"місце", "проживання"}, id="which-parent"),
    pytest.param("Сусід отруїв мою собаку", {"жорстокий", "поводження"}, id="poisoned-dog"),
    pytest.param("Колишня не віддає мої речі", {"витребування", "володіння"}, id="will-not-return-my-things"),
    pytest.param("Мене шантажують інтимними фото", {"конфіденційний", "недоторканність"}, id="intimate-photos"),
    pytest.param("Хімчистка зіпсувала куртку", {"послуга", "недолік"}, id="dry-cleaner"),
    pytest.param("Під час повітряної тривоги ми в укритті", {"вина", "працівник"}, id="air-raid-alert"),
    pytest.param("Працюю неофіційно", {"допуск", "оформлення"}, id="off-the-books"),
    pytest.param("Скільки часу мають дати на обід?", {"перерва", "харчування"}, id="lunch-break"),
    pytest.param("Мене звільнили на четвертому місяці вагітності", {"вагітний", "жінка"}, id="months-pregnant"),
    pytest.param("Поліцейський вимагає дихнути в трубку", {"огляд", "сп'яніння"}, id="breathalyser"),
    pytest.param("Як оскаржити заповіт?", {"недійсний", "недійсність"}, id="contest-a-will"),
    pytest.param("Чи може держава забрати мою власність?", {"примусовий", "відчуження"}, id="state-takes-property"),
    pytest.param("Чи можуть покарати за політичні погляди?", {"переконання"}, id="political-views"),
    pytest.param("Їхав без страховки, зупинила поліція", {"поліс", "страхування"}, id="driving-uninsured"),
    pytest.param("Скільки можуть тримати у відділку?", {"адміністративний", "затримання"}, id="held-at-the-station"),
    pytest.param("Чи можна не відповідати на питання поліцейського?", {"опитування", "добровільний"},
                 id="questions-by-the-police"),
    pytest.param("Власник продав квартиру, а я там живу за договором оренди", {"найм", "наймодавець"},
                 id="rented-flat-sold"),
    pytest.param("Мене обманули на OLX", {"шахрайство", "обман"}, id="cheated-online"),
    pytest.param("Він переспав з 15-річною", {"сексуальний", "характер"}, id="slept-with-a-minor"),
    pytest.param("Чи можна самому затримати злодія?", {"законний", "право"}, id="citizens-arrest"),
    pytest.param("Чи можна подати позов через Електронний суд?", {"інформаційно-комунікаційний", "кабінет"},
                 id="e-court"),
    pytest.param("Чи можна не йти на суд, а відправити адвоката?", {"представник"}, id="send-a-lawyer"),
    pytest.param("Нотаріус - родич продавця", {"вправа", "обмеження"}, id="notary-a-relative"),
    pytest.param("Хочу оскаржити рішення міськради в суді", {"адміністративний", "звернення"}, id="council-decision"),
    pytest.param("При обшуку забрали телефон", {"вилучений", "повертатися"}, id="seized-in-a-search"),
    pytest.param("Як довго діє виконавчий лист?", {"пред'явлений", "документ"}, id="writ-validity"),
    pytest.param("Чи може роботодавець штрафувати за запізнення?", {"дисципліна", "догана"}, id="fined-for-lateness"),
    pytest.param("Мене викликали на роботу з відпустки", {"відкликання"}, id="recalled-from-leave"),
    pytest.param("Перукар зіпсував зачіску", {"послуга", "недолік"}, id="hairdresser"),
    pytest.param("Турфірма скасувала тур", {"послуга", "розірвання"}, id="travel-agency"),
    pytest.param("Мені нав'язують платну підписку", {"агресивний", "підприємницький"}, id="pushed-on-me"),
    pytest.param("Автосалон не віддає машину, хоча я все оплатив", {"продавець", "передати"}, id="paid-not-delivered"),
    pytest.param("Колишній хоче зменшити аліменти", {"розмір", "зміна"}, id="lower-alimony"),
    pytest.param("Бабуся заповіла будинок мені", {"заповідач", "заповіт"}, id="bequeathed-perfective"),
    pytest.param("Хто успадковує, якщо немає дітей?", {"черга", "спадкоємець"}, id="who-inherits"),
    pytest.param("Як поділити спадковий будинок?", {"поділ", "спадщина"}, id="inherited-house"),
    pytest.param("Сусіди ходять через мою ділянку", {"сервітут", "земельний"}, id="right-of-way"),
    pytest.param("Квартира в іпотеці", {"застава", "нерухомий"}, id="mortgage"),
    pytest.param("Як оскаржити штраф?", {"постанова", "правопорушення"}, id="appeal-a-fine"),
    pytest.param("Що буде, якщо не платити штраф?", {"несплата", "примусовий"}, id="unpaid-fine"),
    pytest.param("Чи можна палити кальян у кафе?", {"куріння", "тютюновий"}, id="hookah"),
    pytest.param("Чи платить роботодавець зарплату мобілізованому?", {"збереження", "залучатися"},
                 id="mobilised-job-kept"),
    pytest.param("Куртка не підійшла розміром, чи можна повернути?", {"фасон", "обмін"}, id="wrong-size"),
    pytest.param("Квартира в заставі, хочу її продати", {"заставодержатель", "відчужувати"}, id="selling-collateral"),
    pytest.param("Чоловік не дає розводу", {"позов", "подружжя"}, id="spouse-refuses-divorce"),
    pytest.param("Викликають на допит, чи можу не йти?", {"прибути", "свідок"}, id="summoned-for-questioning"),
    pytest.param("Відпустку я так і не використав за два роки", {"компенсація"}, id="unused-leave-verb"),
    pytest.param("Чи попередили мене про скорочення вчасно?", {"персонально", "вивільнення"}, id="notice-of-layoff"),
    pytest.param("Злодія схопили на місці", {"застати", "вчинення"}, id="caught-in-the-act"),
    pytest.param("Колишня переїхала з сином в інше місто", {"проживання"}, id="moved-away-with-the-child"),
    pytest.param("Хочу написати заповіт на чужу людину", {"родинний", "спадкоємець"}, id="will-to-a-stranger"),
    pytest.param("За критику начальника звільнили", {"вираження", "переконання"}, id="criticism"),
    pytest.param("У мене права прострочені, чи оштрафують?", {"посвідчення", "водій"}, id="expired-licence"),
    pytest.param("Я знайшла чужий телефон у маршрутці", {"знахідка", "загублений"}, id="found-a-phone"),
    pytest.param("Сусід поставив камеру на моє вікно", {"особисте", "таємниця"}, id="neighbours-camera"),
    pytest.param("Мене змусили підписати договір під тиском", {"психічний", "насильство"}, id="signed-under-pressure"),
    pytest.param("Мене обізвали на роботі при всіх", {"гідність", "честь"}, id="called-names"),
    pytest.param("Колега поширює про мене плітки", {"недостовірний", "спростування"}, id="gossip"),
    pytest.param("Брат у тюрмі, чи може він вийти достроково?", {"умовно-достроковий"}, id="early-release"),
    pytest.param("Що буде за їзду без страховки?", {"поліс"}, id="driving-uninsured-noun"),
    pytest.param("Сусід б'є свою дружину", {"домашній", "насильство"}, id="beats-his-wife"),
    pytest.param("Я був тверезий, а мене затримали", {"огляд", "сп'яніння"}, id="sober"),
    pytest.param("Не пустили в ресторан через національність", {"етнічний", "походження"}, id="ethnicity"),
    pytest.param("Хто командує армією?", {"головнокомандувач"}, id="commands-the-army"),
    pytest.param("Чи змусять мене вступити в профспілку?", {"примушений", "вступ"}, id="forced-into-a-union"),
    pytest.param("Суд розглядав справу без публіки", {"гласність"}, id="hearing-behind-closed-doors"),
    pytest.param("Хочу відпустку влітку, а дають взимку", {"графік", "черговість"}, id="leave-in-summer"),
    pytest.param("Скільки мені мають заплатити при скороченні?", {"вихідний"}, id="severance-pay"),
    pytest.param("Чи можна стягнути з працівника гроші за розбиту техніку?", {"матеріальний", "шкода"},
                 id="employee-liability"),
    pytest.param("Куди скаржитися на роботодавця?", {"нагляд", "контроль"}, id="complain-about-employer"),
    pytest.param("Квартира куплена в шлюбі, як ділити?", {"набутий", "сумісний"}, id="bought-during-marriage"),
    pytest.param("Чоловік продав машину без моєї згоди", {"розпоряджання", "подружжя"}, id="sold-without-consent"),
    pytest.param("Мене звільняють, бо я прийшов на роботу напідпитку", {"поява", "нетверезий"}, id="tipsy-at-work"),
    pytest.param("Мені нав'язали страховку", {"агресивний"}, id="pushed-on-me-perfective"),
    pytest.param("Магазин не приймає оплату карткою", {"обмежувати", "безготівковий"}, id="card-refused"),
    pytest.param("Поліцейський хоче оглянути мій рюкзак", {"поверхневий", "перевірка"}, id="bag-search"),
    pytest.param("Я не встиг оскаржити штраф за десять днів", {"поважний", "причина"}, id="missed-the-deadline"),
    pytest.param("Брат не дає поділити будинок", {"частковий", "поділ"}, id="dividing-a-house"),
    pytest.param("Поліція не відкриває справу", {"реєстр", "досудовий"}, id="police-wont-open-a-case"),
    pytest.param("Свідок збрехав у суді", {"неправдивий", "показання"}, id="witness-lied"),
    pytest.param("Скільки платять військовим?", {"грошовий", "забезпечення"}, id="soldiers-pay"),
    pytest.param("Я запізнився з прийняттям спадщини", {"пропустити", "строк"}, id="late-for-the-inheritance"),
    pytest.param("Квартира згоріла з вини сусіда", {"завданий", "шкода"}, id="neighbours-fault"),
    pytest.param("Таксі запізнилося, я не встиг на потяг", {"перевізник", "пасажир"}, id="late-taxi"),
    pytest.param("Отруївся продуктами з магазину", {"недолік", "товар"}, id="food-poisoning"),
    pytest.param("Сусід будує сарай біля самої межі сусіда", {"добросусідство"}, id="neighbours-boundary"),
    pytest.param("Чи можуть на роботі читати мою пошту?", {"таємниця", "листування"}, id="reading-my-mail"),
    pytest.param("Колишній приховує доходи від аліментів", {"грошовий", "розмір"}, id="hidden-income"),
    pytest.param("Бабуся хоче оформити опіку над онуком", {"опікун", "піклувальник"}, id="guardianship"),
    pytest.param("Начальник не відпускає на похорон бабусі", {"смерть", "рідні"}, id="leave-for-a-funeral"),
    pytest.param("Чи можна дитині 14 років працювати на канікулах?", {"чотирнадцятирічний", "навчання"},
                 id="teenager-on-holiday-job"),
    pytest.param("Мене оформили на пів ставки", {"неповний", "робочий"}, id="half-time"),
    pytest.param("З мене тримають з зарплати за форму", {"відрахування"}, id="deducted-from-pay"),
    pytest.param("Мені дали догану, як її оскаржити?", {"спора", "зняття"}, id="appeal-a-reprimand"),
    pytest.param("Дитину цькують у школі", {"булінг", "освітній"}, id="bullied-at-school"),
    pytest.param("Сусід завів собаку, яка гавкає всю ніч", {"шум"}, id="barking-dog"),
    pytest.param("Чи можна помиритися з сусідом, поки справа в суді?", {"мировий", "угода"}, id="settle-in-court"),
    pytest.param("Орендар зіпсував меблі", {"погіршення", "наймач"}, id="tenant-damage"),
    pytest.param("Хтось подряпав мою машину на стоянці", {"зберігання", "автотранспортний"}, id="car-park"),
    pytest.param("Собака вкусила дитину", {"бійцівський", "небезпека"}, id="dog-bite"),
    pytest.param("У кафе не беруть картку", {"безготівковий", "обмежувати"}, id="card-not-taken"),
    pytest.param("Бригадир вимагає віддавати йому частину зарплати", {"посередник", "розпоряджатися"},
                 id="kickback-from-pay"),
    pytest.param("На мене напали, чи можу я дати відсіч?", {"оборона", "захищати"}, id="fight-back"),
    pytest.param("Мені дали догану без пояснень", {"зажадати", "письмовий"}, id="reprimand-without-hearing"),
    pytest.param("Орендодавець заходить в квартиру, коли мене немає", {"недоторканність", "проникнення"},
                 id="landlord-enters"),
    pytest.param("Зачепив дзеркалом машину і поїхав", {"залишення", "пригода"}, id="hit-and-drove-off"),
    pytest.param("Я прийняв спадщину, чи доведеться гасити його борг?", {"кредитор", "вартість"},
                 id="inherited-debt"),
    pytest.param("Хто отримає спадщину першим?", {"черга", "черговість"}, id="who-inherits-first"),
    pytest.param("Чи можна нараховувати пеню за рік?", {"санкція", "шість"}, id="penalty-interest"),
    pytest.param("З братом жити разом неможливо, він трощить меблі", {"виселення", "проживання"},
                 id="impossible-to-live-together"),
    pytest.param("Хто оголошує мобілізацію?", {"частковий", "загальний"}, id="who-declares-mobilisation"),
    pytest.param("Держава хоче забрати мою землю під дорогу", {"приватний", "примусовий", "викуп"},
                 id="land-taken-for-a-road"),
    pytest.param("Мені урізали зарплату без попередження", {"істотний", "умова"}, id="pay-cut"),
    pytest.param("Мене хочуть перевести в інше місто", {"місцевість", "переведення"}, id="transfer-to-another-town"),
    pytest.param("Я відмовилась переходити на іншу посаду", {"переведення", "згода"}, id="refused-another-post"),
    pytest.param("Роботодавці перевіряють моє листування", {"таємниця", "кореспонденція"}, id="checking-my-mail"),
    pytest.param("Місто постійно обстрілюють, хочу звільнитися", {"ведення", "бойовий"}, id="town-under-fire"),
    pytest.param("У нас щодня обстріли", {"загроза", "життя"}, id="shelling-every-day"),
    pytest.param("Біля заводу йдуть бої", {"ведення", "бойовий"}, id="fighting-nearby"),
    pytest.param("Наше село в окупації", {"окупований", "територія"}, id="under-occupation"),
    pytest.param("Куди скаржитись на чиновника?", {"звернення", "скарга"}, id="complain-imperfective"),
    pytest.param("Батько помер, заповіту не залишив", {"черговість"}, id="died-without-a-will"),
    pytest.param("Яку допомогу платять при звільненні?", {"вихідний"}, id="severance-pay"),
    pytest.param("Я переходив дорогу на червоне світло", {"пішохід", "непокора"}, id="pedestrian-on-red"),
    pytest.param("Мене не оформлюють офіційно", {"допущений", "укладення"}, id="not-hired-officially"),
    pytest.param("Чи можна вимагати відсотки за прострочення оплати?", {"річний", "прострочений"},
                 id="interest-on-a-late-payment"),
    pytest.param("Чи можна подати скаргу анонімно?", {"підписаний", "автор"}, id="anonymous-complaint"),
    pytest.param("Банк передав мої дані колекторам", {"поширення", "відомість"}, id="data-passed-on"),
    pytest.param("Хто бачить дані про моє здоров'я?", {"обробка", "персональний"}, id="health-data"),
    pytest.param("Сусід щовесни підпалює стерню біля села", {"випалювання", "рослинність"}, id="burning-stubble"),
    pytest.param("Шеф відправляє мене у Львів по роботі", {"відрядження"}, id="sent-away-for-work"),
    pytest.param("Водій був з перегаром", {"нетверезий", "сп'яніння"}, id="smelling-of-drink"),
    pytest.param("Це не входить в мої обов'язки", {"обумовлений", "трудовий"}, id="not-my-job"),
    pytest.param("Хочу свою половину будинку відділити", {"виділ", "частковий"}, id="a-half-of-a-house"),
    pytest.param("Ми спіймали злодія у під'їзді", {"затримання", "правопорушення"}, id="caught-a-thief"),
    pytest.param("Рішення сільради про випас худоби", {"орган", "самоврядування"}, id="village-council-decision"),
    pytest.param("Чи можна судити президента?", {"недоторканність"}, id="trying-a-president"),
    pytest.param("Чи можу я сам обрати адвоката?", {"захисник", "вибір"}, id="choosing-a-lawyer"),
    pytest.param("Чи врахує суд думку дитини?", {"вислуханий"}, id="the-childs-view"),
    pytest.param("Коли платять декретні?", {"вагітність", "пологи"}, id="maternity-pay"),
    pytest.param("Чоловік мобік, що йому положено?", {"призваний", "мобілізація"}, id="a-mobilised-soldier"),
    pytest.param("Як поділити нажите майно?", {"набутий", "подружжя"}, id="property-of-the-marriage"),
    pytest.param("Хочу переписати квартиру на сина", {"дарування", "заповіт"}, id="signing-a-flat-over"),
    pytest.param("Гілки сусідського дерева звисають на мій город", {"корінь", "проникнення"},
                 id="a-neighbours-branches"),
    pytest.param("Його відпустили під заставу", {"запобіжний", "варта"}, id="out-on-bail"),
    pytest.param("За що можуть оголосити імпічмент?", {"усунення", "пост"}, id="impeachment"),
    pytest.param("У державній лікарні кажуть платити в касу", {"безоплатно"}, id="paying-in-a-state-hospital"),
    pytest.param("Як поскаржитися на слідчого?", {"бездіяльність"}, id="complaining-about-an-investigator"),
    pytest.param("Рішення суду вже вступило в силу?", {"набрання", "законний"}, id="a-judgment-in-force"),
]


@pytest.mark.parametrize(("question", "statute_words"), EXPANDS)
def test_a_lay_phrase_brings_the_statutes_words_in_the_form_people_write_it(question: str,
                                                                            statute_words: set[str]) -> None:
    # when
    added = set(expansions(content_lemmas(question)))
    # then
    assert statute_words <= added, added


NOT_EXPANDED = [
    pytest.param("Патрульний виписав мені штраф", {"жилий", "користування"}, id="fine-is-not-deregistration"),
    pytest.param("Лікар виписав рецепт", {"жилий", "користування"}, id="prescription-is-not-deregistration"),
    pytest.param("До якого віку платять аліменти?", {"кримінальний"}, id="age-is-not-criminal-age"),
    pytest.param("З якого віку можна голосувати?", {"кримінальний"}, id="voting-age"),
    pytest.param("Скільки коштує оформлення документів у ЦНАП?", {"трудовий"}, id="paperwork-is-not-employment"),
    pytest.param("Зарплату затримують вже місяць", {"строк"}, id="phrase-only-in-order"),
    pytest.param("Скільки відсотків ЄСВ платить роботодавець?", {"процент"}, id="percent-is-not-loan-interest"),
    pytest.param("У вакансії написано «тільки чоловіки до 35 років»", {"подружжя"}, id="men-are-not-husbands"),
    pytest.param("Пральна машина зламалась через тиждень", {"транспортний"}, id="washing-machine-is-not-a-vehicle"),
    pytest.param("Чи карається дача показань під тиском?", {"садівництво"}, id="giving-evidence-is-not-a-dacha"),
    pytest.param("Влізли в борги через кредит", {"проникнення"}, id="debts-are-not-a-break-in"),
    pytest.param("Які пільги має ветеран війни?", {"воєнний"}, id="war-veteran-is-not-martial-law"),
    pytest.param("Вкрали золотий браслет", {"електронний"}, id="jewellery-is-not-a-tag"),
    pytest.param("Сусід посадив дерева біля межі", {"позбавлення", "воло"}, id="planting-is-not-prison"),
    pytest.param("Що належить до комунальної власності громади?", {"житлово-комунальний"}, id="municipal-property"),
    pytest.param("Що означає термін «деалкоголізація» у законодавстві?", {"строк"}, id="a-term-is-not-a-time-limit"),
    pytest.param("Мене розвели на гроші в інтернеті", {"розірвання", "шлюб"}, id="scammed-is-not-divorced"),
    pytest.param("Скільки часу займе розгляд справи?", {"позика"}, id="will-take-is-not-a-loan"),
    pytest.param("Чи мушу я свідчити проти злочинця?", {"родич", "сім'я"}, id="testifying-is-not-about-family"),
    pytest.param("Банк списав з картки комісію", {"стягнення", "боржник"}, id="bank-fee-is-not-enforcement"),
    pytest.param("Чи можна обрахувати податок самостійно?", {"обман", "покупець"}, id="calculating-is-not-cheating"),
    pytest.param("Як виправдати запізнення на роботу?", {"виправдувальний", "вирок"}, id="excuse-is-not-acquittal"),
    pytest.param("Він самовільно залишив роботу", {"військовий"}, id="leaving-work-is-not-desertion"),
    pytest.param("Поїхав у город по справах", {"городництво"}, id="surzhyk-city-is-not-a-garden"),
    pytest.param("Релігійна громада хоче зареєструватися", {"територіальний"}, id="religious-community"),
    pytest.param("Я навчаюся заочно, чи дадуть відпустку на сесію?", {"рішення", "розгляд"},
                 id="studying-by-correspondence-is-not-a-default-judgment"),
    pytest.param("Його засудили заочно, поки він був за кордоном", {"заочний"},
                 id="a-conviction-is-not-a-civil-default-judgment"),
    pytest.param("Чи можна скоротити строк розгляду?", {"штат"}, id="shortening-a-time-limit-is-not-a-staff-cut"),
    pytest.param("Я знаю, що це законно", {"незнання"}, id="knowing-without-prohibition"),
    pytest.param("Мене взяли на роботу без оформлення", {"необґрунтований"},
                 id="hired-is-not-refused"),  # «не» is a stopword: no entry may say «не взяли»
    pytest.param("У сервісному центрі МВС не видають посвідчення", {"усунення", "гарантійний"},
                 id="vehicle-registration-office-is-not-a-repair-shop"),
    pytest.param("Бригадир посилає лізти на дах без страховки", {"поліс"}, id="a-safety-rope-is-not-car-insurance"),
    pytest.param("Суд розглянув позов за два місяці", {"давність"}, id="a-hearing-is-not-a-limitation-period"),
    pytest.param("Дружина взяла кредит без моєї згоди, а тепер розлучення", {"позов"},
                 id="consent-near-divorce-is-not-a-contested-divorce"),
    pytest.param("Я не встиг використати всі можливості оскарження", {"компенсація"}, id="using-is-not-unused-leave"),
    pytest.param("Мене поставили в камеру в СІЗО", {"таємниця"}, id="a-cell-is-not-a-neighbours-camera"),
    pytest.param("Встановили камеру на дорозі, прийшов штраф", {"таємниця"}, id="a-speed-camera-is-not-privacy"),
    pytest.param("Чи можна вийти з ТОВ достроково?", {"умовно-достроковий"}, id="leaving-a-company-is-not-parole"),
    pytest.param("Чи можна вивезти дитину за кордон без згоди чоловіка?", {"розпоряджання"},
                 id="taking-a-child-abroad-is-not-selling-property"),
    pytest.param("Роботодавець не виплатив зарплату, як стягнути з роботодавця?", {"матеріальний"},
                 id="suing-the-employer-is-not-employee-liability"),
    pytest.param("Отруїлася чадним газом у квартирі", {"недолік"}, id="gas-poisoning-is-not-a-faulty-product"),
    pytest.param("Суд відкрив провадження у справі", {"реєстр"}, id="a-civil-case-opened-is-not-a-criminal-one"),
    pytest.param("Фірма приховує доходи від податкової", {"грошовий", "розмір"}, id="hidden-income-from-tax"),
    pytest.param("Чоловік не платить аліменти на дитину", {"трьох", "три"}, id="alimony-is-not-spousal-support"),
    pytest.param("Чоловік з дружиною хочуть помиритися після сварки", {"мировий"},
                 id="spouses-reconciling-is-not-a-settlement"),
    pytest.param("Брат забрав мою банківську картку", {"безготівковий"}, id="a-brother-is-not-taking-cards"),
    pytest.param("На співбесіді питали, чи планую народжувати дітей", {"вислуханий"},
                 id="asked-about-children-is-not-hearing-a-child"),
]


def test_a_word_read_first_as_another_still_holds_its_phrase() -> None:
    # given «забрала», which the analyser reads first as the noun «забрало» and only then as «забрати»
    read = content_readings("Поліція забрала телефон під час обшуку", question=True)
    lemmas = [r[0] for r in read]
    assert "забрати" not in lemmas
    # then with the words' readings the phrase «обшук … забрали» holds; on the first readings alone it did not
    assert "вилучений" in expansions(lemmas, read)
    assert "вилучений" not in expansions(lemmas)


@pytest.mark.parametrize(("question", "absent"), NOT_EXPANDED)
def test_a_word_in_another_sense_or_order_does_not_expand(question: str, absent: set[str]) -> None:
    # when
    added = set(expansions(content_lemmas(question)))
    # then
    assert not absent & added, added


def test_a_phrase_of_several_words_expands_only_as_a_whole() -> None:
    # given «вивезти дитину за кордон» (a child taken abroad), and its words in two sentences far apart
    whole = expansion_phrases(content_lemmas("Чи можу я вивезти дитину за кордон без згоди батька?"))
    apart = expansion_phrases(content_lemmas(
        "Я хочу вивезти старі речі з дачі до міста. Наступного літа наша дитина з класом поїде на екскурсію за кордон"))
    # then only the whole phrase brings the statute's «виїзд дитини за межі України»
    assert ("виїзд", "дитина", "межа") in whole
    assert ("виїзд", "дитина", "межа") not in apart


def test_phrases_that_read_alike_say_the_same_statute_words() -> None:
    # A stopword inside a phrase drops out: «аліменти на себе» read as «аліменти» and gave every alimony question
    # the spouse's maintenance. Two phrases that read alike fire together, so they must not say different things.
    by_key: dict[frozenset[str], set[str]] = {}
    for lay, legal in LAY_TERMS.items():
        by_key.setdefault(frozenset(content_lemmas(lay)), set()).add(legal)
    assert {tuple(sorted(k)): v for k, v in by_key.items() if len(v) > 1} == {}


def test_every_entry_has_words_to_match_and_words_to_add() -> None:
    # then no entry is dead: a phrase of stopwords or two-letter words never matches anything
    assert LAY_TERMS == read_terms(DATA_FILE)
    dead = [lay for lay, legal in LAY_TERMS.items() if not content_lemmas(lay) or not content_lemmas(legal)]
    assert dead == []


def test_two_wordings_are_searched_together_and_matched_apart() -> None:
    # given «виїхати за кордон» → «виїзд за межі України | залишати територію України»
    lemmas = content_lemmas("Чи можна виїхати за кордон під час війни?")
    # then the search adds the words of both wordings
    assert {"виїзд", "межа", "залишати", "територія"} <= set(expansions(lemmas))
    # the writer gets each wording as its own phrase, to find whole in one sentence
    wordings = [legal for key, legal in lay_phrases(lemmas) if key == ("виїхати", "кордон")]
    assert wordings == [tuple(content_lemmas("виїзд за межі України")),
                        tuple(content_lemmas("залишати територію України"))]
    # and the model reads the words, not the separator
    assert "|" not in with_statutory_words("Чи можна виїхати за кордон під час війни?")


def test_every_wording_of_an_entry_has_words() -> None:
    # then no « | » leaves an empty or stopword-only wording (it could never be found in a sentence)
    empty = [lay for lay, legal in LAY_TERMS.items()
             if any(not content_lemmas(w) for w in legal.split(lay_terms.ALTERNATIVE))]
    assert empty == []


@pytest.mark.parametrize(("text", "error"), [
    pytest.param("# comment\nлікарняний\tтимчасова непрацездатність\nлікарняний\tхвороба\n", "given twice", id="twice"),
    pytest.param("лікарняний тимчасова непрацездатність\n", "expected", id="no-tab"),
    pytest.param("лікарняний\t \n", "expected", id="no-statute-words"),
])
def test_a_malformed_or_repeated_line_is_an_error(tmp_path: Path, text: str, error: str) -> None:
    # given
    path = tmp_path / "terms.tsv"
    path.write_text(text, encoding="utf-8")
    # then
    with pytest.raises(ValueError, match=error):
        read_terms(path)


def test_comments_and_blank_lines_are_skipped_and_the_order_is_kept(tmp_path: Path) -> None:
    # given
    path = tmp_path / "terms.tsv"
    path.write_text("# header\n\nзарплата\tзаробітна плата\n  # indented comment\nдекрет\tвідпустка\n",
                    encoding="utf-8")
    # then
    assert list(read_terms(path).items()) == [("зарплата", "заробітна плата"), ("декрет", "відпустка")]


def test_the_statutes_words_are_given_as_the_thesaurus_writes_them() -> None:
    from legaltext.lay_terms import LAY_TERMS, statutory_words
    from legaltext.text import content_lemmas

    # in the thesaurus's order, each once («лікарняний» and «на лікарняному» stand for the same words)
    assert statutory_words(content_lemmas("Чи можуть звільнити, поки я на лікарняному?")) == [
        LAY_TERMS["лікарняний"], LAY_TERMS["звільнити"]]
    assert statutory_words(content_lemmas("Скільки днів триває щорічна відпустка?")) == []


def _every_phrase_in_every_window(lemmas: list[str]) -> list[object]:
    """The matching by its definition: every entry whose phrase's lemmas all stand within some window of the phrase's
    length plus the slack, in any order, tried at every position (the reference)."""
    found: list[object] = []
    for entry in lay_terms.entries():
        span = len(entry.key) + lay_terms.PHRASE_SLACK
        if any(set(entry.key) <= set(lemmas[i:i + span]) for i in range(len(lemmas))):
            found.append(entry)
    return found


_KEY_LEMMAS = sorted({lemma for entry in lay_terms.entries() for lemma in entry.key})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_KEY_LEMMAS), st.sampled_from(["не", "мій", "робота", "суд", "x"])),
                max_size=25),
       st.lists(st.sampled_from(range(len(lay_terms.entries()))), max_size=3),
       st.randoms(use_true_random=False))
def test_the_lemma_index_finds_exactly_what_every_phrase_in_every_window_finds(
        words: list[str], planted: list[int], rnd: random.Random) -> None:
    """Phrases planted, their words shuffled, among words that belong to other phrases (so partial matches are
    tried): the same entries, in the thesaurus's order, each once."""
    lemmas = list(words)
    for place in planted:
        key = list(lay_terms.entries()[place].key)
        rnd.shuffle(key)
        lemmas[len(lemmas) // 2:len(lemmas) // 2] = key
    assert list(lay_terms._matched(lemmas)) == _every_phrase_in_every_window(lemmas)


@pytest.mark.parametrize("question", [
    "Мене били у відділку",  # the phrase as the thesaurus writes it
    "У відділку мене били, щоб я підписав зізнання.",  # the same words in another order
    "У відділку поліції мене довго били",  # two words of the sentence between them
])
def test_a_phrase_matches_in_any_order_within_a_few_words(question: str) -> None:
    from legaltext.lay_terms import LAY_TERMS, statutory_words
    from legaltext.text import content_lemmas

    assert LAY_TERMS["били у відділку"] in statutory_words(content_lemmas(question))


def test_a_phrases_words_far_apart_are_not_the_phrase() -> None:
    from legaltext.lay_terms import LAY_TERMS, statutory_words
    from legaltext.text import content_lemmas

    # «били» in one story, «відділок» in another sentence many words later: two things, not the phrase
    question = "Мене били. Потім я довго сидів удома, лікувався, а через рік пішов у відділок поліції."
    assert LAY_TERMS["били у відділку"] not in statutory_words(content_lemmas(question))


def test_each_lay_phrase_gives_one_concept_to_search_alone() -> None:
    # one string an entry, its wordings joined («показати документи» has two), in the thesaurus's order
    assert concepts("Вимагають показати документи, а я на лікарняному") == [
        "тимчасова непрацездатність", "пред'явлення документів що посвідчують особу перевірка документів"]
    assert concepts("Скільки днів відпустки на рік?") == []
