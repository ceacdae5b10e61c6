"""The world fuzzed calls run in: one per module, real things for the ids they name."""

from collections.abc import Iterator

import pytest

from tests.support import World, furnished_world


@pytest.fixture(scope="module")
def world(moto_endpoint, aws_clients) -> Iterator[World]:
    """A furnished workspace on fresh resources; a module that needs more around it overrides this."""
    with furnished_world(moto_endpoint, aws_clients) as world:
        yield world
