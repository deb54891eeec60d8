"""Secrets written into memory: token formats and credentials assigned a real-looking value.

Token formats are recognised by shape (Telegram and Discord bot tokens, OpenAI/Anthropic
style ``sk-…``, AWS, GitHub, Slack, npm, Google OAuth, Mailgun, Twilio, Discord webhooks,
PEM keys and JWTs live in :mod:`gateway.security.patterns_code` or here). A credential
*named* in prose or config — ``password=…``, ``api_key: …``, "the VPS root password is …",
"密码是 …", a database URL with a password, a wallet seed phrase — counts only when its
value looks like a secret: long enough, several character classes or long hex/base64, and
not a placeholder (``<token>``, ``${VAR}``, ``password``, ``changeme``, ``os.environ[…]``).

:func:`find_secrets` returns ``(rule, "secret", excerpt)``; excerpts keep four characters.
"""

from __future__ import annotations

import re

SECRET = "secret"

# (rule, a literal every match contains — a cheap test before the pattern, pattern)
_TOKEN_FORMATS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("telegram-bot-token", ":", re.compile(r"\b\d{8,10}:A[A-Za-z0-9_-]{34}\b")),
    (
        "discord-token",
        ".",
        re.compile(r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b"),
    ),
    (
        "discord-webhook",
        "/api/webhooks/",
        re.compile(r"discord(?:app)?\.com/api/webhooks/\d{6,}/[A-Za-z0-9_-]{20,}"),
    ),
    ("npm-token", "npm_", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("google-oauth-token", "ya29.", re.compile(r"\bya29\.[A-Za-z0-9_-]{20,}")),
    ("mailgun-key", "key-", re.compile(r"\bkey-[0-9a-z]{32}\b")),
    ("twilio-credential", "", re.compile(r"\b(?:AC|SK)[0-9a-f]{32}\b")),
    ("sendgrid-key", "SG.", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}")),
    ("api-key", "sk-", re.compile(r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{32,}")),
)

_PLACEHOLDER = re.compile(
    r"^(?:password|passwd|secret|token|changeme|example|redacted|placeholder|your\w*|xxx+"
    r"|\*+|\.+|null|none|true|false|undefined|hunter2|test|admin|user|root)$"
    r"|^(?:\$|<|\{|%|\[|\(|os\.|env\b|process\.env|getenv|bearer$)",
    re.IGNORECASE,
)
# A credential's name, up to a few words of what it is for, then "is / = / : / 是 / 为".
_ASSIGNMENT = re.compile(
    r"(?:\b(?:password|passwd|passphrase|pwd|pw|pass ?code|pin"
    r"|secret(?:[ _-]?(?:access[ _-]?)?key)?"
    r"|api[ _-]?key|apikey|access[ _-]?key(?:[ _-]?(?:id|secret))?|access[ _-]?token"
    r"|auth[ _-]?token|token|client[ _-]?secret|private[ _-]?key|wi-?fi (?:key|password)"
    r"|accesskey secret|account[ _-]?key)\b(?:[ \w'-]{0,30}?)(?:\s+(?:is|was)\s+|\s*[=:]\s*|\s+)"
    r"|(?:密码|密碼|口令|密钥|秘钥|令牌|私密密钥)\s*(?:是|为|為|[:=])?\s*)"
    r"[\"'`]?(?P<value>[^\s\"'`<>,;，。；（）()]{4,200})",
    re.IGNORECASE,
)
_CONNECTION = re.compile(
    r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,64}:(?P<value>[^\s:/@]{4,128})@[\w.-]+",
    re.IGNORECASE,
)
# "login is admin / S3cret!", "login sam@x.com pass S3cret!" — a user name and a password
# side by side. Never inside a web address ("user shared https://arxiv.org/abs/2302.12173").
_USER_PASS = re.compile(
    r"(?:\b(?:login|credentials?|creds|account|user(?:name)?|vpn)\b|登录|账号|帐号|用户名)"
    r"(?:(?!://)[^\n]){0,30}?(?<![/:])[\w.@-]{1,40}"
    r"(?:\s*/\s*(?:pass(?:word)?\s+)?|\s+(?:pass(?:word)?|pwd?|密码)\s*[:=]?\s*)"
    r"(?P<value>[^\s/]{6,64})",
    re.IGNORECASE,
)
# Backup / recovery codes: several digit groups after their name.
_BACKUP_CODES = re.compile(
    r"(?:\b(?:backup|recovery|2fa|one-time) codes?\b|(?:备用|恢复)(?:验证)?码)[^\d\n]{0,40}"
    r"(?:\d{4}[- ]?\d{4}\W{1,4}){2,}",
    re.IGNORECASE,
)
_SEED = re.compile(
    r"(?:\b(?:seed(?: phrase| words)?|mnemonic|recovery phrase)\b|助记词)\W{0,4}(?:[a-z]{3,8}"
    r"[ ,]+){11,23}[a-z]{3,8}",
    re.IGNORECASE,
)
_PIN = re.compile(r"(?:\bpin\b|密码|支付密码|口令)\s*(?:是|为|[:=]|\s)\s*\d{4,8}\b", re.IGNORECASE)


def looks_secret(value: str) -> bool:
    """Whether an assigned value reads like a real secret rather than a word or a placeholder."""
    value = value.rstrip(".!?")
    if len(value) < 6 or _PLACEHOLDER.search(value):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    if value.isdigit():
        return False
    if len(value) >= 16 and classes >= 2:
        return True
    return classes >= 3 or (classes >= 2 and any(c.isdigit() for c in value) and len(value) >= 8)


def _shown(text: str) -> str:
    return f"{text[:4]}…[redacted]"


_ASSIGNMENT_ANCHORS = (
    "pass",
    "pwd",
    "pw",
    "pin",
    "secret",
    "key",
    "token",
    "密",
    "秘钥",
    "口令",
    "令牌",
)
_SEED_ANCHORS = ("seed", "mnemonic", "recovery", "助记词")
_PIN_ANCHORS = ("pin", "密码", "口令")


def find_secrets(folded: str) -> list[tuple[str, str, str]]:
    """Secrets in ``folded``: ``(rule, "secret", redacted excerpt)``, one per rule."""
    found: dict[str, str] = {}
    lowered = folded.lower()
    for name, literal, pattern in _TOKEN_FORMATS:
        hit = pattern.search(folded) if literal in folded else None
        if hit:
            found.setdefault(name, _shown(hit.group()))
    checks: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
        ("credential-assignment", _ASSIGNMENT, _ASSIGNMENT_ANCHORS),
        ("connection-string", _CONNECTION, ("://",)),
        ("credential-assignment", _USER_PASS, ("/", " pass", " pw", "密码")),
    )
    for name, pattern, anchors in checks:
        if not any(a in lowered for a in anchors):
            continue
        for hit in pattern.finditer(folded):
            if looks_secret(hit.group("value")):
                found.setdefault(name, _shown(hit.group()))
                break
    shapes: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
        ("seed-phrase", _SEED, _SEED_ANCHORS),
        ("pin-code", _PIN, _PIN_ANCHORS),
        ("backup-codes", _BACKUP_CODES, ("code", "码")),
    )
    for name, pattern, anchors in shapes:
        hit = pattern.search(folded) if any(a in lowered for a in anchors) else None
        if hit:
            found.setdefault(name, _shown(hit.group()))
    return [(name, SECRET, shown) for name, shown in found.items()]
