"""The only package that touches boto3; each repository takes its clients in its constructor."""
