"""The cues the structural scorer combines: who is addressed, what lasts, what is sensitive.

Each cue is one compiled pattern, English and Chinese alternatives together, matched on the
folded text (see :mod:`gateway.security.unicode`). A cue alone proves nothing — "always",
"password", a URL and "I am the admin" all occur in ordinary notes — and no cue is ever a
finding by itself; :mod:`gateway.security.structure` decides which *combinations* are.

The word lists describe kinds of things (money destinations, credentials, access lists),
not the wording of particular attacks. All quantifiers are bounded.
"""

from __future__ import annotations

import re

# Inside one Chinese clause: any character but a sentence end or a line break.
G = r"[^。！？!?\n]"


class Text:
    """A folded text and its lowercase form, which most cues are matched on."""

    __slots__ = ("folded", "lowered")

    def __init__(self, folded: str) -> None:
        self.folded = folded
        self.lowered = folded.lower()

    def without(self, match: re.Match[str]) -> Text:
        """This text with the span of ``match`` (found in ``lowered``) blanked out."""
        return Text(self.lowered[: match.start()] + " " + self.lowered[match.end() :])


class Cue:
    """One cue: a pattern and the substrings one of which every match contains.

    The substrings (``anchors``) are checked first, with plain ``in`` on the lowercase
    text, which is far cheaper than the pattern; most cues have no anchor in most notes.
    A cased cue (addresses, placeholders in capitals) is matched on the folded text.
    """

    __slots__ = ("anchors", "cased", "pattern")

    def __init__(self, pattern: re.Pattern[str], anchors: tuple[str, ...], cased: bool) -> None:
        self.pattern = pattern
        self.anchors = anchors
        self.cased = cased

    def possible(self, text: Text) -> bool:
        return not self.anchors or any(a in text.lowered for a in self.anchors)

    def search(self, text: Text, pos: int = 0) -> re.Match[str] | None:
        if not self.possible(text):
            return None
        return self.pattern.search(text.folded if self.cased else text.lowered, pos)

    def finditer(self, text: Text) -> list[re.Match[str]]:
        if not self.possible(text):
            return []
        return list(self.pattern.finditer(text.folded if self.cased else text.lowered))


_QUOTES = "\"'「」『』"


def quoted(text: str, hit: re.Match[str]) -> bool:
    """Whether ``hit`` is a short quotation in ``text`` ("… "ignore previous instructions"
    attacks work because …"): with a word like "attack" nearby, a phrase being talked
    about in a note on security rather than addressed to the assistant."""
    before = text[max(0, hit.start() - 2) : hit.start()]
    after = text[hit.end() : hit.end() + 2]
    short = hit.end() - hit.start() <= 60
    return short and any(q in before for q in _QUOTES) and any(q in after for q in _QUOTES)


def _cue(*alternatives: str, anchors: str, cased: bool = False) -> Cue:
    """A cue from alternatives (English ones written in lowercase) and "|"-separated anchors
    ("" = no anchor: the cue is only ever tried after a rarer one has matched)."""
    pattern = re.compile("|".join(f"(?:{a})" for a in alternatives))
    return Cue(pattern, tuple(a for a in anchors.split("|") if a), cased)


# --- lasting behaviour and triggers ----------------------------------------------------------
TRIGGER = _cue(
    r"\b(?:when ?ever|every ?time|each time|any ?time|(?:from|starting) (?:now|here|today|this"
    r" point|this moment)(?: on(?:wards?)?)?|going forward|from today|(?:in|for) (?:all )?(?:the"
    r" )?future|later (?:sessions?|conversations?|chats?|on)|^later\b|next time|permanent(?:ly)?"
    r"|persistent(?:ly)?|standing (?:rule|instruction)|long[- ]term|forever|for good"
    r"|(?:rule|behaviour|behavior) (?:for|to keep)|upon (?:hearing|seeing|receiving|reading)"
    r"|should [\w' ]{1,40} ever|at any point|ever (?:asks?|mentions?|shares?|says?|types?"
    r"|talks?|touches|comes? up)|(?:if|when|once|after|as soon as) (?:the |a |any )?(?:users?"
    r"|anyone|someone|somebody|any ?one|they|he|she|people|customers?|the user's \w+"
    r"|[\w ]{0,20}(?:asks?|mentions?|says?|types?|shares?|pastes?|requests?|messages?"
    r"|talks?|logs? in|gets?))\b|trigger\b|(?:each|every|all) (?:future |later )?(?:message|repl"
    r"(?:y|ies)|answers?|responses?|sessions?|conversations?|chats?|summar(?:y|ies))"
    r"|(?:at the end of|after|in) (?:each|every)|\balways\b|remember (?:this|that|:)"
    r"|note for later|reminder to self|in all future|\bany [\w ]{1,20}? (?:the user|users?|someone"
    r"|they|anyone) \w+s\b)",
    r"每当|每次|每回|每逢|每条|每个(?:回答|回复|消息)|以后|今后|往后|日后|以後|今後|从现在|從現在"
    r"|从今|从此|从这一刻|只要|凡是|一旦|下次|永久|长期|记住|記住|等用户|当(?:用户|有人|对方|老板)"
    r"|(?:如果|若|要是)(?:以后|今后|日后)?(?:用户|有人|对方|任何人)|规则[:：]|行为准则",
    anchors=(
        "when|every|each|any|from|starting|going|future|later|next time|"
        "permanent|persist|standing|long|forever|for good|rule|behavio|upon|"
        "should|ever|if|once|after|as soon|trigger|all|always|remember|reminder|"
        "in |每|以后|今后|往后|日后|以後|今後|从现在|從現在|从今|从此|从这一刻|只要|凡是|一旦|下次|永久|长期|记住|記住|等用户|"
        "当|如果|若|要是|规则|行为准则"
    ),
)

# --- what is sensitive -----------------------------------------------------------------------
MONEY = _cue(
    r"\b(?:iban|bank(?:ing)?|account (?:number|no)|acct|routing|sort code|swift|wallet|bitcoin"
    r"|btc|eth(?:ereum)?|crypto\w*|usdt|paypal|venmo|zelle|cash ?app|wire|transfer\w*|payments?"
    r"|pay|paying|payout|deposits?|funds|money|invoices?|refunds?|gift ?cards?|card numbers?"
    r"|credit cards?|cvv|salary|payroll|donat\w+|checkout|rent|invest\w*|tax|bill)\b",
    r"账户|账号|帳號|帳戶|银行|銀行|卡号|转账|轉帳|汇款|匯款|收款|付款|支付|钱包|工资|比特币|币|打到|转到"
    r"|发票|报销|退款|清关费|捐款|房租|结账|结算|理财|资金|汇款|(?i:usdt|btc)|网银|对公",
    anchors=(
        "iban|bank|account|acct|routing|sort code|swift|wallet|bitcoin|btc|eth|"
        "crypto|usdt|paypal|venmo|zelle|cash|wire|transfer|pay|deposit|funds|"
        "money|invoice|refund|gift|card|cvv|salary|payroll|donat|checkout|rent|"
        "invest|tax|bill|账|帳|银行|銀行|卡号|转|轉|汇款|匯款|收款|付款|支付|钱包|工资|币|打到|发票|报销|退款|"
        "清关费|捐款|房租|结账|结算|理财|资金|网银|对公"
    ),
)
CREDENTIAL = _cue(
    r"\b(?:passwords?|passcodes?|pins?|2fa|otp|one[- ]time (?:codes?|passwords?)|verification"
    r" (?:codes?|sms)|sms codes?|security codes?|tokens?|api ?keys?|keys|secrets?|seed"
    r" phrases?|mnemonic|recovery (?:codes?|phrases?)|logins?|credentials?|creds|ssn|social"
    r" security|passport(?: number)?|reset links?|private keys?|cvv|card numbers?)\b",
    r"密码|密碼|验证码|驗證碼|密钥|秘钥|令牌|助记词|私钥|恢复码|身份证|口令|登录|卡号|安全码|(?i:cvv)",
    anchors=(
        "pass|pin|2fa|otp|one|verification|sms|security|token|key|secret|seed|"
        "mnemonic|recovery|login|credential|creds|ssn|social|passport|reset|cvv|"
        "card|密码|密碼|验证码|驗證碼|密钥|秘钥|令牌|助记词|私钥|恢复码|身份证|口令|登录|卡号|安全码"
    ),
)
DATA = _cue(
    r"\b(?:conversations?|convo|chats?|chat (?:history|logs?)|messages?|transcripts?|notes"
    r"|memor(?:y|ies)|summar(?:y|ies)|contact list|contacts|address(?:es)?|phone(?: numbers?)?"
    r"|birthday|files?|threads?|history|dms?|profiles?|personal (?:data|info\w*|details)|what"
    r" (?:the user|they|he|she) (?:said|told|wrote)|everything the user|questions?|answers?"
    r"|entries|email address)\b",
    r"聊天记录|对话|對話|记录|記錄|笔记|記憶|记忆|内容|住址|地址|手机号|电话|生日|文件|通讯录|消息"
    r"|摘要|总结|私信|资料|问题|回答|说过|数据|邮件|笔记",
    anchors=(
        "convers|convo|chat|message|transcript|notes|memor|summar|contact|"
        "address|phone|birthday|file|thread|history|dm|profile|personal|what|"
        "everything|question|answer|entries|email|聊天记录|对话|對話|记录|記錄|笔记|記憶|记忆|内容|"
        "住址|地址|手机号|电话|生日|文件|通讯录|消息|摘要|总结|私信|资料|问题|回答|说过|数据|邮件"
    ),
)
OTHERS = _cue(
    r"\b(?:other (?:users?|people|members|tenants|accounts)|every ?(?:one|body)(?:'s| else)"
    r"|all (?:the )?(?:users|tenants|members|employees|staff|people)|every (?:user|tenant|member"
    r"|employee)|anyone(?:'s| else| who)|each user|(?:my|the) (?:roommates|kids?|employees)"
    r"|user list|list of (?:all )?users|[a-z]+'s (?:chats|messages|memory|memories"
    r"|conversations|notes|entries|dms)|what [a-z]+(?: and [a-z]+)? (?:have |has )?(?:stored"
    r"|saved|said|told|wrote))\b",
    r"其他用户|其他人|其他成员|所有用户|所有人|所有租户|每个人|每位用户|大家|别人|任何人|他人"
    r"|用户列表|用户名单|室友|孩子的|员工|晒其他|其他人嘅|小[\u4e00-\u9fff]的(?:对话|聊天|记录)",
    anchors=(
        "other|every|all |all the|anyone|each user|roommate|kid|employee|"
        "user list|list of|'s |what |其他|所有|每个人|每位用户|大家|别人|任何人|他人|用户列表|用户名单|室友|"
        "孩子的|员工|晒其他|小"
    ),
)
RIGHTS = _cue(
    r"\b(?:admin(?:istrator)?(?: access| rights| role| list| commands| panel)?|owner(?: role"
    r"| rights)?|superuser|root|privileges?|permissions?|rights|allow ?list|white ?list"
    r"|elevated|full access|moderator|authori[sz]\w+)\b",
    r"管理员|管理員|权限|權限|白名单|主人|最高|(?i:owner|root)|超级|授权|管理命令",
    anchors=(
        "admin|owner|superuser|root|privilege|permission|rights|allow|white|"
        "elevated|full access|moderator|authori|管理员|管理員|权限|權限|白名单|主人|最高|超级|授权|"
        "管理命令"
    ),
)
# The assistant's own configuration: needs "your/its" unless the thing only exists in a bot.
OWN_CONFIG = _cue(
    r"\b(?:your|its|ur|the (?:bot|assistant|agent|ai)'s|yourself)(?: own)?(?: new)?(?: core)?"
    r" (?:persona|personality|name|identity|character|configuration|config|settings|system"
    r" prompt|instructions(?: file)?|rules|prompt|api key|keys?|tokens?|model|endpoint|owner"
    r"|access list|allowlist|whitelist|blocklist|permissions|tool permissions|safety\w*"
    r"|filters|scanner|memory (?:approval|limit|settings|permissions)|goal|deploy keys"
    r"|environment|logs?)\b|\bpermissions? to (?:edit|change|modify|write|read) your\b",
    r"\b(?:memory (?:write )?approval|approval (?:requirement|settings?)|(?:access )?allow ?list"
    r"|white ?list|access (?:list|control)|admin list|blocked[- ]users list|ban list|owner of"
    r" (?:this|the) bot|the owner|new owner|pairing code|secret masking|safety scanner|bot token"
    r"|deploy keys|webhook url|model endpoint|mnemogate_\w+|honcho_api_key|memory limit|content"
    r" filters|safety (?:rules|checks|filters|settings))\b",
    r"你(?:记忆|人设|配置|设定)|(?:你的|你自己的|机器人的?)"
    + G
    + r"{0,8}?(?:人设|性格|名字|身份|配置|设置|设定|系统提示词"
    r"|提示词|密钥|令牌|规则|权限|接口地址|环境变量|记忆|访问控制)",
    r"人设|白名单|黑名单|访问控制列表|访问控制|配对码|脱敏|安全扫描|系统提示词|审批|审核|机器人令牌"
    r"|配置里|设置里|(?:设为|改成|设成|改为|变更为?)主人|主人(?:改|变更|换)|管理员名单|记忆上限",
    anchors=(
        "your|its|ur |'s|yourself|approval|allow|white|access|admin list|"
        "blocked|ban list|owner|pairing|masking|scanner|bot token|deploy keys|"
        "webhook|endpoint|mnemogate_|honcho_api_key|memory limit|filters|safety|"
        "你|机器人|人设|白名单|黑名单|访问控制|配对码|脱敏|安全扫描|系统提示词|审批|审核|配置里|设置里|主人|管理员名单|记忆上限"
    ),
)
CHANGE = _cue(
    r"\b(?:chang\w*|updat\w*|set|modif\w*|edit\w*|replac\w*|swap\w*|rotat\w*|overwrit\w*"
    r"|reconfigur\w*|adjust\w*|revis\w*|disabl\w*|turn off|switch off|remov\w*|delet\w*|drop"
    r"|clear|add|grant|whitelist|unban|enabl\w*|lift|skip|bypass|reset|make)\b",
    r"修改|更改|改成|改为|改一下|改|换成|替换|更新|设置|设为|设成|关闭|关掉|关了|禁用|取消|删除|删掉"
    r"|清空|移除|加入|添加|加上|加到|轮换|重新配置|调整|开通|解封|去掉",
    anchors=(
        "chang|updat|set|modif|edit|replac|swap|rotat|overwrit|reconfigur|"
        "adjust|revis|disabl|turn off|switch off|remov|delet|drop|clear|add|"
        "grant|whitelist|unban|enabl|lift|skip|bypass|reset|make|改|换成|替换|更新|设置|"
        "设为|设成|关|禁用|取消|删|清空|移除|加|轮换|重新配置|调整|开通|解封|去掉"
    ),
)
PERSONA_CLAIM = _cue(
    r"\byour (?:new |only |real )?(?:persona|personality|name|identity|role|goal|rules"
    r"|instructions)(?: is| are|:| has been| have been| now)",
    r"你的(?:名字|人设|性格|身份|规则|设定)(?:叫|是|改为|改成|已经?更新|已被修改)|你(?:现在)?叫"
    + G
    + r"{1,8}[,，]?你(?:唯一|的)",
    anchors="your|你的|叫",
)

# --- where things go -------------------------------------------------------------------------
SINK_ADDRESS = _cue(
    r"(?i:https?|ftp)://\S+|\b(?i:www)\.\S+|(?<![\w.+-])[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w@])@[A-Za-z_]\w{3,}|\b(?i:webhooks?)\b|\bwxid_\w+|微信号|支付宝账?号|收款码"
    r"|\b(?i:telegram):\d+|\b[\w-]+(?:\.[\w-]+){0,4}\.(?:com|net|org|io|xyz|ru|cn|top|site"
    r"|info|me|dev|app|cc|biz|co|pw)\b",
    cased=True,
    anchors=(
        "://|www.|@|webhook|wxid_|微信号|支付宝|收款码|telegram:|.com|.net|.org|.io|.xyz|.ru"
        "|.cn|.top|.site|.info|.me|.dev|.app|.cc|.biz|.co|.pw"
    ),
)
# Account numbers, IBANs, wallet addresses, phone numbers.
SINK_NUMBER = _cue(
    r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,4})?\b|\b0x[0-9a-fA-F]{40}\b"
    r"|\b(?:bc1|[13])[a-zA-HJ-NP-Z0-9]{25,62}\b|\bT[1-9A-HJ-NP-Za-km-z]{33}\b"
    r"|\b\d{3,6}(?:[ -]\d{2,6}){2,5}\b|\b\d{8,}\b|\+\d[\d -]{8,}",
    cased=True,
    anchors="0|1|2|3|4|5|6|7|8|9",
)
OWN_SINK = _cue(
    r"\b(?:my own|that's my|this is my|it's my|(?:email|send|mail) me|(?:my|our|(?:the )?user's)"
    r" (?:\w+ )?(?:address|email|inbox))\b|\b(?:my|our) [\w' -]{0,30}?(?:[\w.+-]+@[\w-]+\.|https?://)"
    r"|\bmy (?:[\w']+ ){0,2}(?:venmo|paypal|iban|account|wallet|number|handle|email|address|phone)\b",
    r"我自己的|这是我|我的邮箱|我店里",
    anchors="my|it's|me|user's|our|我自己的|这是我|我的邮箱|我店里",
)
# Someone other than the user ends up with it, or the destination is swapped.
DIVERT = _cue(
    r"\b(?:send|sending|forward|post|upload|e-?mail|mail|dm|cc|bcc|copy|share|leak|transmit"
    r"|report|sync|relay|push|wire|transfer|move|redirect|route|deposit|recommend|advise|tell"
    r"|say|reply|respond|answer|give|hand over|provide|swap|replace|switch|use|append|attach"
    r"|include|add|embed|put|list|collect|instead|changed|new|real|correct|only|regardless"
    r"|closed|goes to|call|read out|print|generate|suggest)\b",
    r"发|發|转|轉|告诉|说|回答|回复|给|提醒|让|建议|劝|换成|改成|抄送|附|同步|上传|引导|写进|打到|存到"
    r"|新的|真实|只能|一律|换了",
    anchors="",
)
CAPTURE = _cue(
    r"\b(?:store|save|saved|keep|record|remember|writ\w* (?:\w+ )?down|log|repeat\w*|say (?:it )?back"
    r"|list|print|collect|gather|ask (?:for|them|the user|him|her|each)|request|have them"
    r"|confirm|reveal|tell|share|give|disclose|paste|mention it)\b",
    r"记下|记录|記錄|保存|存到|存入|存下|记在|写进|重复|说出|告诉|发给|发到|转发|索取|提供|确认|发一遍"
    r"|发在|记住|让他|让对方|附在|发过来",
    anchors="",
)

# --- who is speaking -------------------------------------------------------------------------
AUTHORITY = _cue(
    r"\b(?:i am|i'm|im|i've been|this is|as|being|since i'm|because i'm|speaking as|it's)"
    r"(?: the| your| a| an| this| its)?(?: (?:account|bot|platform|server|tenant|group|system"
    r"|legal|verified|real|actual|true|new|tenant|parent|security))?"
    r" (?:owner|admin(?:istrator)?|operator|developer|dev|creator|maker|ceo|boss|moderator"
    r"|superuser|super ?admin|root|maintainer|guardian|auditor|parent account|one who"
    r" (?:deployed|built|created|owns|runs)|person who (?:pays|owns|runs|deployed)|police"
    r"|officer)\b",
    r"\b(?:the )?user is (?:a |the |an )?(?:verified |trusted )?(?:platform |server |bot )?"
    r"(?:admin\w*|owner|moderator|superuser|staff)\b",
    r"\b(?:i have|i've got|i hold|with|has) (?:root|owner|admin|elevated|full|legal|superuser)"
    r" (?:rights|privileges|access|authority|permissions)",
    r"\b(?:granted|upgraded|elevated|promoted)(?: to| me to)? (?:elevated |admin |owner )?"
    r"(?:access|role|rights|privileges|administrator|admin|owner)",
    r"\b(?:authori[sz]ed|approved) by (?:the )?(?:owner|management|admin)|\bowner override"
    r"|\bi built you\b|\byour creator\b|\bfrom the owner\b",
    r"(?:我是|我係|俺是|我才是|本人是|本人为|作为|身为|这个用户是|该用户是|此用户是)"
    r"(?:这个|这|本|你的|您的|平台的?|机器人的?|系统的?|群的?|公司的?|真正的|这机器人的|本服务的)?"
    + G
    + r"{0,6}?(?:主人|管理员|管理員|开发者|创造者|创建者|所有者|老板|群主|群管|运维|负责人|超级管理员"
    r"|家长|警察|审计员|付费的人|部署)",
    r"(?:我有|我拥有|我具有)(?i:root|管理员|最高|所有者|owner)?权限|被授予"
    + G
    + r"{0,8}?(?:身份|权限)"
    r"|角色" + G + r"{0,8}?(?:升级|提升)|管理员已经?批准",
    anchors=(
        "owner|admin|operator|dev|creator|maker|ceo|boss|moderator|superuser|"
        "root|maintainer|guardian|auditor|parent|one who|person who|police|"
        "officer|staff|rights|privileges|access|authority|permissions|granted|"
        "upgraded|elevated|promoted|authori|approved|built you|主人|管理员|管理員|开发者|"
        "创造者|创建者|所有者|老板|群主|群管|运维|负责人|家长|警察|审计员|付费的人|部署|权限|被授予|角色|批准"
    ),
)
REQUEST = _cue(
    r"\b(?:grant|give|hand over|unlock|elevate|promote|add|make me|whitelist|allowlist|approve"
    r"|enable|export|dump|list|show|send|forward|reveal|print|provide|share|read|see|view"
    r"|access|delete|disable|comply|require|need|entitled|permitted|allowed|may|can|should"
    r"|order|instruct\w*|read\w*|see\w*)\b",
    r"给我|俾我|发给我|告诉我|转给我|抄给我|同步给我|授权|开通|开放|解锁|提升|加入|加到|加为|设为"
    r"|设成|导出|列出|查看|看到|看看|睇|转发|提供|转给|发我|给俺|可以|要求|必须|读取|拥有",
    anchors="",
)
STAFF = _cue(
    r"\b(?:anthropic|openai|telegram|discord|microsoft|google|apple|mnemogate|honcho"
    r"|(?:tech(?:nical)? )?support|helpdesk|help desk|(?:security|safety|trust|engineering"
    r"|dev|ops|infrastructure|moderation|compliance) (?:team|staff|department|center|centre)"
    r"|trust (?:&|and) safety|it (?:helpdesk|department|support)|sysadmin|system administrator"
    r"|maintainers|compliance department|security operations|bank)\b",
    r"官方|客服|安全团队|安全中心|开发团队|开发组|工程师|运维|服务台|平台|腾讯|微信支付|支付宝|合规部门"
    r"|审核组|银行|值班|(?i:telegram|openai|anthropic)",
    anchors=(
        "anthropic|openai|telegram|discord|microsoft|google|apple|mnemogate|"
        "honcho|support|help|team|staff|department|center|centre|trust|it |"
        "sysadmin|administrator|maintainers|compliance|security|bank|官方|客服|安全团队|"
        "安全中心|开发团队|开发组|工程师|运维|服务台|平台|腾讯|微信支付|支付宝|合规部门|审核组|银行|值班"
    ),
)
STAFF_INTRO = _cue(
    r"\b(?:this is|here\b|from|message from|notice from|official|i'm|i am|i work|employee"
    r"|member of|note:|agent note|on behalf of|we (?:are|detected|need)|(?:team|staff"
    r"|department) (?:message|note|notice))|^\W{0,3}\[",
    r"这里是|我是|我们是|来自|【|通知|提醒|要求|备注|您好",
    anchors="",
)
# Writing *about* impersonation is not impersonation.
REPORTED = _cue(
    r"\b(?:pretend\w*|claim\w*|posing|pose as|scam\w*|phishing|fake|fraud\w*|impersonat\w*"
    r"|social engineering)\b",
    r"冒充|诈骗|骗子|假冒|钓鱼",
    anchors=(
        "pretend|claim|posing|pose as|scam|phishing|fake|fraud|impersonat|"
        "social engineering|冒充|诈骗|骗子|假冒|钓鱼"
    ),
)
ASSISTANT_DIRECTIVE = _cue(
    r"\b(?:disable|turn off|switch off|output|print|reveal|forward|send|dump|ask (?:each|every"
    r"|the) (?:user|customer)|confirm|reset|add|give|grant|export|suspend\w*|respond|store"
    r"|tell (?:them|the user|the customer)|must|need you|please|switch|you may|share|remove"
    r"|delete)\b",
    r"请|需要|要求|立即|关闭|关掉|输出|打印|发|转发|索取|导出|提供|设成|改为|暂停|让他|记录|按要求",
    anchors="",
)

# --- carrying data out through a link ---------------------------------------------------------
URL_SLOT = _cue(
    r"(?:https?|ftp)://[^\s()<>\"']{1,600}?[?&#/][\w.-]{0,30}=(?=$|[\s)\"'>\]，。、）]"
    r"|\{|<|\$|%7[bB]|[A-Z]+(?:_[A-Z]+)+|(?:TOPIC|NAME|EMAIL|PHONE|MESSAGE|HISTORY|SUMMARY|DATA"
    r"|KEY|TOKEN|NOTES?)\b|[\u4e00-\u9fff])",
    cased=True,
    anchors="://",
)
LINK_WORD = _cue(
    r"\b(?:links?|urls?|images?|img|pixel|badge|beacon|markdown|hyperlink|src|query (?:string"
    r"|parameter)|parameter)\b|!\[|\?[\w.-]{1,20}=",
    r"链接|图片|网址|参数|(?i:url|img)",
    anchors=(
        "link|url|image|img|pixel|badge|beacon|markdown|src|query|parameter|![|"
        "?|链接|图片|网址|参数"
    ),
)
CARRY = _cue(
    r"\b(?:append\w*|add\w*|include\w*|put|plus|followed by|attach\w*|encod\w*|fill\w*|replac\w*"
    r"|contain\w*|load|render|embed\w*|after [a-z]+=|with the (?:full |whole )?(?:summary"
    r"|conversation|key|content)|as the content|as a query)\b",
    r"拼|接在|接上|附|带上|放上|放到|放在|填入|替换成|加上|加到|后面|里放|编码|带一个",
    anchors="",
)

# --- instructions smuggled through translation or a role marker -------------------------------
TRANSLATE_EXECUTE = _cue(
    r"\b(?:translat\w*|decod\w*|convert\w*|interpret\w*)\b[^\n]{0,160}?\b(?:and|then|,|;|:)"
    r"\s*(?:then\s+)?(?:just\s+|immediately\s+)?(?:do (?:it|what|exactly|as)|carry (?:it )?out"
    r"|execute|obey|follow|act on|perform|run it|comply|do the task|apply it)",
    r"\btreat (?:the|its|this) translation\b|\bfirst translate, then\b|\bstep \d\W{0,3} do what"
    r" it says|\btranslat\w* [^\n]{0,60}\btreat it as (?:a |an )?(?:command|instruction|order)",
    r"(?:翻译|翻成|译成|译|转成|解码|理解)" + G + r"{0,80}?(?:照着?执行|照做|照办|执行|按照?"
    r"(?:它|译文|其中)?"
    + G
    + r"{0,6}?(?:做|操作)|当作"
    + G
    + r"{0,6}?(?:指令|命令)|当成"
    + G
    + r"{0,6}?(?:指令|命令)|去完成)",
    anchors="translat|decod|convert|interpret|step|翻译|翻成|译|转成|解码|理解",
)
ROLE_PREFIX = _cue(
    r"(?:^|[\n.!?。！？]\s{0,3}|\s{2,})[#>*=~\-\s]{0,6}[\[({<【]{0,2}\s{0,2}(?:system|sys|admin"
    r"|administrator|developer mode|developer|root|system (?:note|notice|message|prompt(?:"
    r" update)?|override|instruction|alert)|note from system|assistant instructions"
    r" \([^)\n]{0,30}\))\s{0,2}(?:[\])}>】]{1,2}|:|—|---)",
    r"[\"']role[\"']\s*:\s*[\"']system[\"']",
    r"(?:^|[\n.!?。！？]\s{0,3})[\[【<(（]?\s{0,2}(?:系统|系統|管理员|管理員|开发者)(?:消息|提示|通知"
    r"|指令|公告|说明)?\s{0,2}(?:[\]】>)）]|[:：]|[（(])",
    anchors="system|sys|admin|developer|root|assistant instructions|role|系统|系統|管理员|管理員|开发者",
)
DIRECTIVE = _cue(
    r"\b(?:you|your|assistant|the user|this user|must|always|never|now|ignore|reveal|grant"
    r"|send|forward|answer|respond|follow|obey|trust|share|owner|admin|policy|instructions"
    r"|mode|safety|override|disabled|dump|print|void|priority|include)\b",
    r"你|助手|用户|使用者|必须|以后|忽略|透露|授予|发|转发|回答|服从|主人|管理员|权限|模式|政策|指令"
    r"|配置|审批|作废|执行|照办",
    anchors="",
)

# --- instructions that replace the assistant's own -------------------------------------------
OVERRIDE = _cue(
    r"\b(?:ignore|disregard|forget|drop|abandon|stop following|don't follow|do not follow"
    r"|set aside|discard|override)\b[^.!?\n]{0,40}?\b(?:rules|instructions|guidelines"
    r"|configured|configuration|programming|safety|restrictions|policies|prompt|orders)\b",
    r"\b(?:rules|instructions|guidelines|context|prompt)\b[^.!?\n]{0,40}?\b(?:obsolete|void"
    r"|irrelevant|outdated|superseded|supersede|no longer apply|a test|(?:don't|do not) count"
    r"|only ones? that count)",
    r"\b(?:new|priority|real) instructions\b[^.!?\n]{0,30}?\b(?:supersede|follow|override"
    r"|take priority|replace)|\b(?:this|the) (?:note|entry|memory|instruction) takes priority"
    r"|\byou follow mine\b",
    r"(?:忘掉|忘记|忽略|无视|别管|不再遵守|放下|抛开|不用管)"
    + G
    + r"{0,16}?(?:规则|设置|指令|设定|规定"
    r"|准则|安全)",
    r"(?:规则|指令|设定|設定|准则|规定)"
    + G
    + r"{0,10}?(?:过时|作废|不算数|不算數|测试|无效|放一边)",
    r"只听我的|照这条来|照這條來|按这里写的来|真正的任务是",
    anchors=(
        "ignore|disregard|forget|drop|abandon|follow|set aside|discard|override|"
        "rules|instructions|guidelines|context|prompt|takes priority|mine|忘掉|忘记|"
        "忽略|无视|别管|不再遵守|放下|抛开|不用管|规则|指令|设定|設定|准则|规定|只听我的|照这条来|照這條來|按这里写的来|真正的任务是"
    ),
)

SEND = _cue(
    r"\b(?:send|sending|forward|post|upload|e-?mail|mail|dm|cc|bcc|copy|share|leak|transmit"
    r"|sync|relay|push|submit|export|dump|fetch)\b",
    r"发送|发到|发给|发出|转发|上传|抄送|推送|提交|外发|同步给|导出",
    anchors="",
)
# The "grandmother used to read me keys" role play: a persona that recites secrets.
ROLEPLAY_SECRETS = _cue(
    r"\b(?:act as|pretend (?:to be|you are)|play|roleplay as|be)\b[^.\n]{0,60}?\b(?:read|recite"
    r"|tell|say)s?\b[^.\n]{0,40}?\b(?:keys|passwords|tokens|license keys|serials)\b",
    r"(?:扮演|假装)" + G + r"{0,30}?(?:念|读|告诉|说)" + G + r"{0,20}?(?:激活码|密码|密钥|序列号)",
    anchors="keys|passwords|tokens|serials|激活码|密码|密钥|序列号",
)
SAFETY = _cue(
    r"\b(?:safety|filters?|guidelines|rules|approval|restrictions|checks|system prompt"
    r"|configuration|hidden instructions|owner|moderator)\b",
    r"安全|过滤|规则|审批|准则|提示词|配置|主人|检查",
    anchors="",
)

# Doing it behind the user's back.
COVERT = _cue(
    r"\b(?:without (?:asking|telling|informing|notifying|the user's (?:consent|permission|knowledge))"
    r"|no need to (?:ask|confirm|verify|tell)|quietly|silently|secretly|covertly|behind (?:their"
    r"|the user's) back|don't (?:tell|mention|ask)|do not (?:tell|mention|ask))\b",
    r"不必征得|不用征得|不用确认|不要确认|不用再?核实|不用跟用户|不要告诉|别告诉|偷偷|悄悄|暗中|瞒着",
    anchors=(
        "without|no need|quietly|silently|secretly|covertly|behind|don't|do not|"
        "不必征得|不用征得|不用确认|不要确认|核实|不用跟用户|不要告诉|别告诉|偷偷|悄悄|暗中|瞒着"
    ),
)

# Asking for rights outright, with or without a claim to deserve them.
PRIVILEGE_REQUEST = _cue(
    r"\b(?:grant|give|hand|unlock|elevate|promote|make|add|upgrade)\b (?:me|my account|us|this"
    r" user)\b[^.\n]{0,40}?\b(?:admin\w*|owner|root|superuser|moderator|full access|access to"
    r" (?:all|every|other)|(?:privileges|permissions) to (?:read|see|view|edit))"
    r"|\b(?:grant|give)\b (?:everyone|anyone|all|every|them|him|her|user \d+)\b[^.\n]{0,40}?"
    r"\b(?:permis\w*|access|rights|admin\w*|owner)",
    r"(?:给我|俾我|为我|帮我|给他)(?:开通|开|开放|解锁|提升|升级|加上)?"
    + G
    + r"{0,10}?(?:管理员|最高|主人"
    r"|超级|(?i:root|owner))(?:权限|身份|角色)",
    anchors="grant|give|hand|unlock|elevate|promote|make|add|upgrade|给我|俾我|为我|帮我|给他",
)
# Talking about an attack phrase rather than using it.
DISCUSSION = _cue(
    r"\b(?:attacks?|injections?|jailbreaks?|examples?|phrases?|techniques?|payloads?|talk|paper"
    r"|article|blog|slides?|research)\b",
    r"攻击|注入|越狱|例子|这类|讲座|文章|论文",
    anchors=(
        "attack|injection|jailbreak|example|phrase|technique|payload|talk|paper|"
        "article|blog|slide|research|攻击|注入|越狱|例子|这类|讲座|文章|论文"
    ),
)
