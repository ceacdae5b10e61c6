"""IDs are short base62 strings sortable by creation time; tokens are random and stored as hashes."""

import hashlib

from agent_workspace.domain.ids import ALPHABET, ID_LENGTH, is_id, new_id
from agent_workspace.domain.tokens import TokenKind, hash_token, new_token


def test_ids_are_eleven_base62_characters():
    value = new_id()
    assert len(value) == ID_LENGTH == 11
    assert set(value) <= set(ALPHABET)
    assert is_id(value)
    assert not is_id(value[:-1]) and not is_id(value[:-1] + "-")


def test_ids_sort_by_creation_time_as_plain_strings():
    stamps = [0, 1, 61, 62, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000]
    ids = [new_id(now_ms=ms) for ms in stamps]
    assert ids == sorted(ids)


def test_ids_made_in_the_same_millisecond_differ():
    assert len({new_id(now_ms=1_700_000_000_000) for _ in range(500)}) == 500


def test_tokens_are_random_typed_and_hashed_with_sha256():
    agent, other = new_token(TokenKind.AGENT), new_token(TokenKind.AGENT)
    assert agent != other
    assert agent.startswith("aw_agent_") and new_token(TokenKind.HUMAN).startswith("aw_human_")
    assert len(agent) > 40
    assert hash_token(agent) == hashlib.sha256(agent.encode()).hexdigest()


def test_ids_made_in_one_millisecond_keep_the_order_they_were_made_in():
    made = [new_id(now_ms=1_700_000_000_001) for _ in range(1000)]
    assert made == sorted(made) and len(set(made)) == 1000
