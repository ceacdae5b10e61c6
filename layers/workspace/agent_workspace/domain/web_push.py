"""Web Push (RFC 8030) from the server to the human's browsers: the stack's VAPID key (RFC 8292), the push
services a subscription may name, and the message encryption (RFC 8291, aes128gcm of RFC 8188).

The encryption is written here on `cryptography` because http-ece ships no wheel and the Lambda layer takes
wheels only; tests/integration/test_notifications.py decrypts it with http-ece itself.
"""

import hashlib
import hmac
import secrets
from typing import Any

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.notifications import b64url, from_b64url, plain_url_parts

_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def vapid_key(seed: bytes) -> Any:
    """The stack's VAPID private key (P-256), the same in every function and on every cold start."""
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.derive_private_key(int.from_bytes(seed, "big") % (_P256_ORDER - 1) + 1, ec.SECP256R1())


def public_key_b64(private_key: Any) -> str:
    """The browser's `applicationServerKey`: the uncompressed public point, base64url."""
    from cryptography.hazmat.primitives import serialization

    raw = private_key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return b64url(raw)


# The browsers' push services; an endpoint elsewhere is refused, so a subscription cannot aim the server at
# another host. (Chrome: FCM; Firefox: Mozilla's autopush; Edge: WNS; Safari: Apple's.)
PUSH_HOSTS = ("fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com")
PUSH_HOST_SUFFIXES = (".notify.windows.com", ".push.apple.com")
PUSH_ENDPOINT_MAX = 1024
PUSH_SUBSCRIPTIONS_MAX = 10


def check_push_endpoint(value: str, *, allow_loopback: bool, field_name: str = "endpoint") -> str:
    if not isinstance(value, str) or len(value) > PUSH_ENDPOINT_MAX:
        raise PayloadError(
            f"{field_name} must be a push service URL of at most {PUSH_ENDPOINT_MAX} characters", field=field_name
        )
    parts = plain_url_parts(value, field_name)
    port = parts.port
    host = parts.hostname or ""
    known = host in PUSH_HOSTS or host.endswith(PUSH_HOST_SUFFIXES)
    service = parts.scheme == "https" and known and port in (None, 443)
    loopback = allow_loopback and parts.scheme == "http" and host in ("127.0.0.1", "localhost")
    if not (service or loopback):
        raise PayloadError(f"{field_name} is not a browser push service's URL", field=field_name)
    return value


def encrypt_push(payload: bytes, p256dh: bytes, auth: bytes) -> bytes:
    """RFC 8291's message encryption (aes128gcm, RFC 8188), one record: only the subscribed browser can read it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    browser = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), p256dh)
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    server = ephemeral.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    shared = ephemeral.exchange(ec.ECDH(), browser)
    ikm = _hkdf(auth, shared, b"WebPush: info\x00" + p256dh + server, 32)
    salt = secrets.token_bytes(16)
    key = _hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
    nonce = _hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
    record = AESGCM(key).encrypt(nonce, payload + b"\x02", None)  # 0x02: the last (only) record's delimiter
    return salt + (4096).to_bytes(4, "big") + bytes([len(server)]) + server + record


def _hkdf(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    """HKDF-SHA-256 (RFC 5869) for one block: every length Web Push needs is at most 32 bytes."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()[:length]


def check_push_key(value: str, field_name: str, size: int) -> bytes:
    """A subscription's key (p256dh: 65 bytes, auth: 16), base64url as the browser gives it."""
    try:
        raw = from_b64url(value) if isinstance(value, str) and len(value) <= 200 else b""
    except ValueError:
        raw = b""
    if len(raw) != size:
        raise PayloadError(f"{field_name} must be {size} bytes, base64url-encoded", field=field_name)
    return raw
