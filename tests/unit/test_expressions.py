"""The store's update and condition expressions: every name aliased, every value serialised, no empty map."""

import re

import pytest
from boto3.dynamodb.conditions import Attr

from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if, revision_is, status_is


def placeholders_match_their_maps(params: dict) -> bool:
    """DynamoDB refuses a placeholder with no entry, and an entry no expression uses."""
    text = " ".join(params.get(k, "") for k in ("UpdateExpression", "ConditionExpression"))
    used = set(re.findall(r"[#:]\w+", text))
    defined = set(params.get("ExpressionAttributeNames", {})) | set(params.get("ExpressionAttributeValues", {}))
    return used == defined


def test_set_aliases_the_name_and_serialises_the_value():
    params = Update().set("title", "Ship it").params()

    assert params == {
        "UpdateExpression": "SET #u0 = :u0",
        "ExpressionAttributeNames": {"#u0": "title"},
        "ExpressionAttributeValues": {":u0": {"S": "Ship it"}},
    }


def test_reserved_words_never_reach_the_expression_bare():
    params = Update().set("status", "completed").set("name", "x").only_if(status_is("inprogress")).params()

    assert not re.search(r"(?<![#:\w])(status|name)\b", params["UpdateExpression"] + params["ConditionExpression"])
    assert sorted(params["ExpressionAttributeNames"].values()) == ["name", "status", "status"]
    assert placeholders_match_their_maps(params)


def test_set_expr_appends_to_a_list_with_its_own_placeholders():
    entry = {"status": "completed", "at": "2026-01-01T00:00:00Z"}

    params = Update().set_expr("history", "list_append(#history, :entry)", entry=[entry]).params()

    assert params["UpdateExpression"] == "SET #u0 = list_append(#u0, :u0)"
    assert params["ExpressionAttributeNames"] == {"#u0": "history"}
    assert params["ExpressionAttributeValues"] == {
        ":u0": {"L": [{"M": {"status": {"S": "completed"}, "at": {"S": "2026-01-01T00:00:00Z"}}}]}
    }


def test_add_delete_and_remove_each_get_their_clause_in_one_expression():
    params = Update().remove("claim").delete("usedBy", {"w1"}).add("files", {"a.md"}).set("updatedAt", "t").params()

    assert params["UpdateExpression"] == "SET #u3 = :u2 ADD #u2 :u1 DELETE #u1 :u0 REMOVE #u0"
    assert params["ExpressionAttributeValues"] == {":u0": {"SS": ["w1"]}, ":u1": {"SS": ["a.md"]}, ":u2": {"S": "t"}}
    assert placeholders_match_their_maps(params)


def test_a_path_aliases_each_part_and_reuses_a_name_seen_before():
    params = Update().add("taskCounts.notstarted", -1).add("taskCounts.completed", 1).params()

    assert params["UpdateExpression"] == "ADD #u0.#u1 :u0, #u0.#u2 :u1"
    assert params["ExpressionAttributeNames"] == {"#u0": "taskCounts", "#u1": "notstarted", "#u2": "completed"}


def test_no_empty_names_or_values_map_is_sent():
    assert only_if(NEW_ITEM) == {
        "ConditionExpression": "attribute_not_exists(#n0)",
        "ExpressionAttributeNames": {"#n0": "PK"},
    }
    assert "ExpressionAttributeValues" not in Update().remove("claim").params()
    assert "ExpressionAttributeValues" not in Update().remove("claim").only_if(EXISTS).params()


def test_conditions_given_twice_must_both_hold():
    params = Update().set("revision", 4).only_if(revision_is(3)).only_if(Attr("ownerWorkspaceId").eq("w1")).params()

    assert params["ConditionExpression"] == "(#n0 = :v0 AND #n1 = :v1)"
    assert params["ExpressionAttributeNames"] == {"#u0": "revision", "#n0": "revision", "#n1": "ownerWorkspaceId"}
    assert params["ExpressionAttributeValues"] == {":u0": {"N": "4"}, ":v0": {"N": "3"}, ":v1": {"S": "w1"}}


def test_a_task_status_change_renders_as_the_store_sends_it():
    """Completing a queued task for the first time: move it, drop its queue keys, publish its event once."""
    entry = {"status": "completed", "at": "t1", "by": "agent"}
    params = (
        Update()
        .set("status", "completed")
        .set("updatedAt", "t1")
        .set_expr("history", "list_append(#history, :entry)", entry=[entry])
        .set("GSI2SK", "completed#t0#T1")
        .only_if(status_is("inprogress"))
        .set("eventPublicationId", "P1")
        .only_if(Attr("eventPublicationId").not_exists())
        .remove("GSI1PK")
        .remove("GSI1SK")
        .params()
    )

    assert params["UpdateExpression"] == (
        "SET #u0 = :u0, #u1 = :u1, #u2 = list_append(#u2, :u2), #u3 = :u3, #u4 = :u4 REMOVE #u5, #u6"
    )
    assert params["ConditionExpression"] == "(#n0 = :v0 AND attribute_not_exists(#n1))"
    assert params["ExpressionAttributeNames"] == {
        "#u0": "status",
        "#u1": "updatedAt",
        "#u2": "history",
        "#u3": "GSI2SK",
        "#u4": "eventPublicationId",
        "#u5": "GSI1PK",
        "#u6": "GSI1SK",
        "#n0": "status",
        "#n1": "eventPublicationId",
    }
    assert params["ExpressionAttributeValues"][":v0"] == {"S": "inprogress"}
    assert placeholders_match_their_maps(params)


def test_a_claim_condition_nests_and_or_with_map_paths():
    """The dequeue's claim: still where the page saw it, or already claimed by this very (retried) request."""
    unclaimed = status_is("notstarted") & Attr("GSI1SK").eq("seen")
    retried = status_is("notstarted") & Attr("GSI1SK").eq("lease") & Attr("claim.tokenId").eq("tok")

    params = Update().set("GSI1SK", "lease").only_if(unclaimed | retried).params()

    assert params["ConditionExpression"] == (
        "((#n0 = :v0 AND #n1 = :v1) OR ((#n2 = :v2 AND #n3 = :v3) AND #n4.#n5 = :v4))"
    )
    names = params["ExpressionAttributeNames"]
    assert (names["#n4"], names["#n5"]) == ("claim", "tokenId")
    assert placeholders_match_their_maps(params)


def test_an_update_of_nothing_or_to_none_is_refused_before_it_is_sent():
    with pytest.raises(ValueError, match="changes nothing"):
        Update().only_if(EXISTS).params()
    with pytest.raises(ValueError, match="remove the attribute"):
        Update().set("error", None)
