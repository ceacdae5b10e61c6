"""Print template.yaml as CloudFormation sees it after the SAM transform (the roles, URL and alias SAM makes).

Runs in .venv-tools, where aws-sam-cli brings the translator: `.venv-tools/bin/python scripts/translate_template.py`.
"""

import json
import os
import sys
from pathlib import Path

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class _NoManagedPolicies:
    """Our roles name no AWS managed policy, so the translator never needs IAM to look one up."""

    def load(self) -> dict[str, str]:
        return {}


def translated(path: Path) -> dict:
    template = yaml_parse(path.read_text())
    for resource in template["Resources"].values():  # as `sam validate` does: code lives in S3 once packaged
        for uri in ("CodeUri", "ContentUri"):
            if isinstance(resource.get("Properties", {}).get(uri), str):
                resource["Properties"][uri] = "s3://bucket/value"
    parameters = {"AWS::Region": "us-east-1", "AWS::Partition": "aws", "AWS::AccountId": "123456789012"}
    return transform(template, parameters, _NoManagedPolicies())


if __name__ == "__main__":
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the translator asks boto3 for a region
    root = Path(__file__).resolve().parents[1]
    json.dump(translated(Path(sys.argv[1]) if len(sys.argv) > 1 else root / "template.yaml"), sys.stdout, indent=1)
