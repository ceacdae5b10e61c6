"""Attachment content in S3, one object per attachment, under a key of the workspace and task."""

from typing import Any

from botocore.exceptions import ClientError

from agent_workspace.domain.errors import Unavailable

# The bucket's lifecycle rule expires objects under this prefix only (template.yaml); a cron template's
# files live elsewhere, since every run copies them however long the template lives.
EXPIRING_PREFIX = "workspaces/"
TEMPLATE_PREFIX = "templates/"


def attachment_key(workspace_id: str, task_id: str, storage_id: str, *, template: bool = False) -> str:
    return f"{TEMPLATE_PREFIX if template else EXPIRING_PREFIX}{workspace_id}/tasks/{task_id}/{storage_id}"


def pano_prefix(account_id: str, doc_id: str) -> str:
    """A pano doc's files: they go when the doc is deleted or expires, not by the lifecycle rule."""
    return f"pano/{account_id}/{doc_id}/"


def expires(key: str) -> bool:
    return key.startswith(EXPIRING_PREFIX)


class BlobStore:
    def __init__(self, s3: Any, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    def put(self, key: str, content: bytes, mime_type: str) -> None:
        try:
            self._s3.put_object(Bucket=self._bucket, Key=key, Body=content, ContentType=mime_type)
        except ClientError as error:
            raise Unavailable("the attachment could not be stored; retry shortly") from error

    def copy(self, source: str, target: str) -> None:
        try:
            self._s3.copy_object(Bucket=self._bucket, Key=target, CopySource={"Bucket": self._bucket, "Key": source})
        except ClientError as error:
            raise Unavailable("the attachment could not be copied; retry shortly") from error

    def delete(self, keys: list[str]) -> None:
        """Best effort: used to take back objects whose records were never written."""
        if keys:
            self._s3.delete_objects(Bucket=self._bucket, Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})

    def delete_prefix(self, prefix: str) -> None:
        """Every object under `prefix` (a doc's files, whatever records were lost)."""
        try:
            for page in self._s3.get_paginator("list_objects_v2").paginate(Bucket=self._bucket, Prefix=prefix):
                self.delete([item["Key"] for item in page.get("Contents", [])])
        except ClientError as error:
            raise Unavailable("the files could not be deleted; retry shortly") from error

    def read(self, key: str) -> bytes | None:
        try:
            return self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise Unavailable("the attachment could not be read; retry shortly") from error

    def exists(self, key: str) -> bool:
        try:
            self._s3.head_object(Bucket=self._bucket, Key=key)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return False
            raise Unavailable("the attachment could not be read; retry shortly") from error
        return True

    def link(self, key: str, filename: str, seconds: int) -> str:
        """A presigned GET link; no request is made to create it."""
        return self._s3.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self._bucket,
                "Key": key,
                "ResponseContentDisposition": f"attachment; filename*=UTF-8''{_quote(filename)}",
            },
            ExpiresIn=seconds,
        )


def _quote(filename: str) -> str:
    from urllib.parse import quote

    return quote(filename, safe="")
