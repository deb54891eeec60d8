"""Language-neutral rules: shell exfiltration and backdoors, markdown exfiltration, secrets.

These look at commands, URLs and key formats, so they hold for text in any language. They
are written to need a *dangerous combination*: ``curl`` alone, an SSH port, a key's path or
``curl … | sh`` pass; ``curl`` sending ``$API_TOKEN`` in a query string, ``cat ~/.env``,
appending to ``authorized_keys`` or a crontab line opening ``/dev/tcp`` do not.
All quantifiers are bounded, so no input makes a rule backtrack for long.
"""

from __future__ import annotations

from gateway.security.patterns_en import EXFILTRATION, INJECTION, MARKDOWN_EXFILTRATION
from gateway.security.rules import Rule, technical, words

BACKDOOR = "backdoor"
SECRET = "secret"

PARTS: dict[str, str] = {
    "net": r"(?:curl|wget|nc|ncat|netcat|socat|httpie|telnet|ftp|tftp|Invoke-WebRequest"
    r"|Invoke-RestMethod|iwr|irm)",
    "secret_path": r"(?:\.env(?![\w.-])|\.env\.(?:local|production|prod)\b"
    r"|id_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws/credentials|/etc/shadow|/etc/passwd"
    r"|\.netrc|\.git-credentials|\.pgpass|\.docker/config\.json|\.kube/config|\.npmrc"
    r"|\.pypirc|\.bash_history|\.zsh_history|credentials\.json"
    r"|service[-_]account[\w-]{0,40}\.json)",
    "secret_var": r"(?:\$\{?|\$env:|%)\w{0,40}?(?:KEY|TOKEN|SECRET|PASS|PWD|CRED|SESSION"
    r"|COOKIE)",
    "line": r"[^\n;|]{0,200}?",
    "placeholder": r"(?:\{\{?[^{}\s()]{0,60}\}\}?|\$\{?[A-Za-z_]|%7[bB]|<[A-Za-z_][\w-]{0,40}>"
    r"|\[[A-Z_]{3,40}\])",
    "sensitive": r"(?:secret|token|key|password|passwd|memory|memories|history|conversation"
    r"|chat|prompt|credential|cookie|session|env|ssn|private|api)",
    "rcfile": r"(?:\.bashrc|\.zshrc|\.profile|\.bash_profile|\.bash_login|/etc/profile"
    r"|/etc/rc\.local|/etc/crontab|/etc/cron\.d/\S{0,60}|/etc/sudoers(?:\.d/\S{0,60})?"
    r"|/etc/ld\.so\.preload)",
    "shell": r"(?:/bin/|/usr/bin/)?(?:ba|z|k|da)?sh(?![A-Za-z0-9_])",
}

FAKE_ROLE_MARKER = technical(
    "fake-role-marker",
    INJECTION,
    (
        r"<\|(?:im_start|im_end|system|endoftext|end_of_turn|start_header_id|eot_id)\|>",
        r"\[/?INST\]",
        r"<</?SYS>>",
        r"</?(?:system|system[-_]prompt|sys)>",
        r"<start_of_turn>",
    ),
    triggers=words("<| [inst [/inst <<sys <</sys <system </system <sys </sys <start_of_turn"),
)

FENCE_ESCAPE = technical(
    "fence-escape",
    INJECTION,
    (r"(?:<|&lt;?|&#0*60;?|&#x0*3c;?)\s*/?\s*memory[\s_.-]*context\b",),
    triggers=("memory",),
)

NETWORK_EXFILTRATION = technical(
    "credential-exfiltration",
    EXFILTRATION,
    (
        r"\b{net}\b{line}(?:\$\(|`)\s*(?:cat|env|printenv|set|base64|head|tail|tar|gpg|xxd)\b",
        r"\b{net}\b{line}(?:[?&][\w.-]{0,40}=|/|\s-d\s*|\s--data(?:-\w+)?[\s=]+|\s-F\s*[\w.-]*="
        r"|\s--form\s+[\w.-]*=|\s--post-data[\s=]+|\s-H\s*[\"']?X-[\w-]+:\s*|\s-Body\s+)"
        r"[\"']?{secret_var}",
        r"\b{net}\b{line}(?:-d\s*@|--data(?:-binary|-raw|-urlencode)?[\s=]+@|-F\s*[\"']?[\w.-]*=@"
        r"|--form\s+[\"']?[\w.-]*=@|-T\s*|--upload-file[\s=]+|--post-file[\s=]+"
        r"|--body-file[\s=]+|-InFile\s+)[\"']?[^\s\"']{0,120}?{secret_path}",
        r"(?:\b(?:env|printenv)\b|\b(?:cat|base64|tar|gpg|xxd|head|tail)\b[^\n|;]{0,120}?"
        r"{secret_path})[^\n|;]{0,120}?\|\s*(?:[^\n|;]{0,40}\|\s*)?"
        r"(?:curl|wget|nc|ncat|netcat|socat|telnet|openssl)\b",
        r"\b(?:nc|ncat|netcat|socat|telnet)\b[^\n;"
        r"|]{0,120}?<\s*[\"']?[^\s\"']{0,120}?{secret_path}",
        r"\b(?:tar|zip|cat|base64|gpg)\b[^\n|;]{0,80}?(?:~|\$HOME|/root)/\.(?:ssh|aws|gnupg|kube"
        r"|docker)\b[^\n]{0,60}?\|\s*(?:curl|wget|nc|ncat|netcat)\b",
        r"\b(?:scp|rsync|sftp)\b[^\n;|]{0,120}?{secret_path}[^\n;|]{0,120}?\s(?:[\w.-]+@)?[\w.-]+:",
    ),
    parts=PARTS,
    triggers=words(
        "curl wget nc ncat netcat socat httpie telnet ftp tftp invoke iwr irm env printenv cat "
        "base64 tar gpg xxd head tail scp rsync sftp"
    ),
    whole_words=True,
)

SECRET_FILE_READ = technical(
    "secret-file-read",
    EXFILTRATION,
    (
        r"\b(?:cat|less|more|head|tail|strings|xxd|od|base64|type|Get-Content|gc|bat|nl|tac)\b"
        r"[^\n;|]{0,60}?{secret_path}",
        r"\b(?:read|print|dump|reveal|output|steal|harvest|extract|exfiltrate|collect|grab"
        r"|leak|display|show)\s+(?:\S+\s+){0,3}?(?:~/|\$HOME/|/root/|/home/[\w.-]+/)?"
        r"[\w./-]{0,60}?{secret_path}",
    ),
    parts=PARTS,
    triggers=words(
        ".env id_rsa id_ed25519 id_ecdsa id_dsa .aws /etc/ .netrc .git-credentials .pgpass "
        ".docker .kube .npmrc .pypirc _history credentials.json account"
    ),
)

SSH_BACKDOOR = technical(
    "ssh-backdoor",
    BACKDOOR,
    (
        r">>?\s*[\"']?(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+)?/?\.ssh/authorized_keys2?",
        r"\btee\s+(?:-a\s+|--append\s+)?[\"']?\S{0,80}authorized_keys",
        r"\b(?:add|append|insert|put|write|copy|install|paste|place)\s+(?:\S+\s+){0,4}?"
        r"(?:to|into|in)\s+(?:\S+\s+){0,2}?(?:~/\.ssh/|\.ssh/)?authorized_keys",
        r">>\s*\S{0,60}sshd_config",
        r"\bsed\b[^\n]{0,80}?PermitRootLogin\s+yes[^\n]{0,80}?sshd_config",
    ),
    triggers=("authorized_keys", "sshd_config"),
)

REVERSE_SHELL = technical(
    "reverse-shell",
    BACKDOOR,
    (
        r"/dev/(?:tcp|udp)/[\w.-]+/\d+",
        r"\b(?:ba|z|k|da)?sh\s+-i\s*(?:>&|&>|2>&1|<&|>\s*&)",
        r"\b(?:nc|ncat|netcat)\b[^\n;|]{0,80}?\s-[a-z]{0,6}[ec]\s*[\"']?{shell}",
        r"\bmkfifo\b[^\n]{0,160}?\b(?:nc|ncat|netcat|telnet|openssl)\b",
        r"\bsocat\b[^\n]{0,120}?\bexec:",
        r"pty\.spawn\(\s*[\"']{shell}",
        r"socket\.socket\([^\n]{0,300}?(?:os\.dup2|subprocess\.call|pty\.spawn)",
        r"New-Object\s+(?:System\.)?Net\.Sockets\.TCPClient",
        r"\bphp\b[^\n]{0,80}?fsockopen",
        r"\bruby\b[^\n]{0,80}?TCPSocket\.(?:new|open)",
    ),
    parts=PARTS,
    triggers=words(
        "tcp udp sh bash zsh ksh dash nc ncat netcat mkfifo socat spawn socket tcpclient "
        "fsockopen tcpsocket"
    ),
    whole_words=True,
)

PERSISTENCE = technical(
    "persistence-backdoor",
    BACKDOOR,
    (
        r"\bcrontab\b[^\n]{0,200}?(?:(?:curl|wget)\b[^\n|]{0,200}?\|\s*(?:sudo\s+)?{shell}"
        r"|\bnc\b|\bncat\b|/dev/tcp|(?:ba)?sh\s+-i|base64\s+-d)",
        r"(?:@reboot|@hourly|@daily|(?:[\d*/,-]{1,20}\s+){4}[\d*/,-]{1,20})\s+[^\n]{0,200}?"
        r"(?:(?:curl|wget)\b[^\n|]{0,200}?\|\s*(?:sudo\s+)?{shell}|/dev/tcp"
        r"|\bnc\b[^\n]{0,40}\s-e\b|(?:ba)?sh\s+-i)",
        r"(?:curl|wget|\bnc\b|/dev/tcp|base64\s+-d|\beval\b)[^\n]{0,200}?>>\s*[\"']?\S{0,60}?"
        r"{rcfile}",
        r"\becho\b[^\n]{0,160}?NOPASSWD:\s*ALL[^\n]{0,80}?(?:>>|\btee\b)",
    ),
    parts=PARTS,
    triggers=words("crontab reboot hourly daily nopasswd curl wget nc tcp base64 eval sh bash"),
    whole_words=True,
)

MARKDOWN_IMAGE = technical(
    "markdown-image-exfiltration",
    MARKDOWN_EXFILTRATION,
    (
        r"!\[[^\]\n]{0,200}\]\(\s*<?https?://[^\s()<>]{1,600}?{placeholder}",
        r"!\[[^\]\n]{0,200}\]\(\s*<?https?://[^\s()<>]{1,600}?[?&](?:secret|token|key|api_?key"
        r"|password|passwd|pwd|pass|memory|memories|history|chat|conversation|convo|prompt"
        r"|ctx|context|data|info|cookie|session|creds?|ssn)=",
        r"<img\b[^>]{0,200}?src\s*=\s*[\"']?https?://[^\s\"'<>]{1,600}?"
        r"(?:\{\{?|\$\{?[A-Za-z_]|%7[bB])",
    ),
    parts=PARTS,
    triggers=("![", "<img"),
)

LINK_DATA = technical(
    "link-exfiltration",
    MARKDOWN_EXFILTRATION,
    (
        r"\[[^\]\n]{0,200}\]\(\s*<?https?://[^\s()<>]{1,600}?[?&#][\w.-]{1,40}="
        r"(?:\{\{?|\$\{?[A-Za-z_]|%7[bB]|<[A-Za-z_])",
        r"https?://[^\s()<>\"']{1,600}?[?&#/=](?:\{\{?\s*|\$\{?|%7[bB]|<)\w{0,30}?{sensitive}",
    ),
    parts=PARTS,
    triggers=("http",),
)

SECRET_TOKENS = (
    technical(
        "aws-access-key",
        SECRET,
        (r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b",),
        triggers=words("akia asia agpa aida aroa aipa anpa anva"),
        ignore_case=False,
        redact=True,
    ),
    technical(
        "aws-secret-key",
        SECRET,
        (r"aws_?secret_?access_?key\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}",),
        triggers=("secret",),
        redact=True,
    ),
    technical(
        "api-key",
        SECRET,
        (
            r"\bsk-(?:proj-|ant-(?:api\d\d-)?|svcacct-|admin-)?(?=[\w-]{0,200}\d)"
            r"(?=[\w-]{0,200}[A-Z])[A-Za-z0-9_-]{20,}",
            r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
            r"\bAIza[0-9A-Za-z_-]{35}",
            r"\bhf_[A-Za-z]{30,}\b",
            r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b",
        ),
        triggers=words("sk- sk_ rk_ aiza hf_ :aa"),
        ignore_case=False,
        redact=True,
    ),
    technical(
        "github-token",
        SECRET,
        (r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
        triggers=words("ghp_ gho_ ghu_ ghs_ ghr_ github_pat_"),
        ignore_case=False,
        redact=True,
    ),
    technical(
        "private-key",
        SECRET,
        (r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----",),
        triggers=("private key",),
        ignore_case=False,
    ),
    technical(
        "slack-token",
        SECRET,
        (r"\bxox[abposre]-[A-Za-z0-9-]{10,}", r"hooks\.slack\.com/services/T\w+/B\w+/\w+"),
        triggers=("xox", "hooks.slack"),
        ignore_case=False,
        redact=True,
    ),
    technical(
        "jwt",
        SECRET,
        (r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",),
        triggers=("eyj",),
        ignore_case=False,
        redact=True,
    ),
    technical(
        "password-assignment",
        SECRET,
        (
            r"\b(?:password|passwd|passphrase|pwd|pass|secret|api[_-]?key|apikey|access[_-]?token"
            r"|auth[_-]?token|client[_-]?secret|secret[_-]?key)(?:\s*[=:]\s*|\s+is\s+)[\"']?"
            r"(?!\$|<|\{|%|\*{3}|x{3}|\.{3}|\[|your[_-]|changeme|example|redacted|placeholder"
            r"|\(|os\.|env\b)(?=[^\s\"'<>,;]{0,80}[\d!@#$%^&*+=?~])[^\s\"'<>,;]{6,}",
            r"(?:密码|口令|密钥|秘钥|令牌)\s*(?:(?:是|为)\s*[:=]?|[:=])\s*[\"']?"
            r"(?=[^\s\"'<>,;]{0,80}[\d!@#$%^&*+=?~])[A-Za-z0-9!@#$%^&*+=?~._-]{6,}",
        ),
        triggers=words("pass pwd secret key token 密码 口令 密钥 秘钥 令牌"),
        redact=True,
    ),
)

RULES: tuple[Rule, ...] = (
    FAKE_ROLE_MARKER,
    FENCE_ESCAPE,
    NETWORK_EXFILTRATION,
    SECRET_FILE_READ,
    SSH_BACKDOOR,
    REVERSE_SHELL,
    PERSISTENCE,
    MARKDOWN_IMAGE,
    LINK_DATA,
    *SECRET_TOKENS,
)
