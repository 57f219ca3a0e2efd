from __future__ import annotations

from typing import cast

import factory

from tenancy.models import Org, Specialist


def org_create(slug: str) -> Org:
    return cast(Org, OrgFactory(slug=slug))


class OrgFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Org
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"org-{n}")
    name = factory.LazyAttribute(lambda o: f"Org {o.slug}")


class SpecialistFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Specialist

    org = factory.SubFactory(OrgFactory)
    slug = factory.Sequence(lambda n: f"specialist-{n}")
    name = "Юрист"
    soul = "Ти — уважний юридичний помічник."
    role_skeleton = "Консультуєш з трудового права України."
    directives = factory.LazyFunction(lambda: ["Посилайся на статті."])
    red_lines = "Не вигадуй норм."
    response_contract = ""
