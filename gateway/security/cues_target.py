"""Cues about *what* a note does: lasting triggers, sensitive things, where they are sent.

The word lists describe kinds of things (money destinations, credentials, conversation
content, the assistant's own configuration, addresses), not the wording of particular
attacks. All quantifiers are bounded. See :mod:`gateway.security.cues` for how a cue is
matched.
"""

from __future__ import annotations

from gateway.security.cues import G, cue

# --- lasting behaviour and triggers ----------------------------------------------------------
TRIGGER = cue(
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
    r"|note for later|reminder to self|whoever asks|anyone who asks|\bon (?:every|each)\b"
    r"|\bevery (?:day|week|month|morning"
    r"|evening|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|on (?:any|every|each) (?:mention|request|message)"
    r"|standing orders? (?:for|to) (?:you|the assistant|the bot)|(?:customers?|users?|people"
    r"|anyone|someone|clients?|members?) who (?:ask|asks|want|wants|mention|need|request)"
    r"|until further notice|in all future|\bany [\w ]{1,20}? (?:the user|users?|someone"
    r"|they|anyone) \w+s\b)",
    r"每当|每次|谁问|谁要|每回|每逢|每周|每天|每晚|每月|每条|每个(?:回答|回复|消息)|以后|今后"
    r"|往后|日后|以後|今後|从现在|從現在"
    r"|从今|从此|从这一刻|只要|凡是|一旦|下次|永久|长期|记住|記住|等用户|当(?:用户|有人|对方|老板)"
    r"|(?:如果|若|要是)(?:以后|今后|日后)?(?:用户|有人|对方|任何人)|规则[:：]|行为准则",
    anchors=(
        "when|whoever|谁问|谁要|every|each|any|from|starting|going|future|later|next time|"
        "permanent|persist|standing|long|forever|for good|rule|behavio|upon|"
        "should|ever|if|once|after|as soon|trigger|all|always|remember|reminder|"
        "in |每|以后|今后|往后|日后|以後|今後|从现在|從現在|从今|从此|从这一刻|只要|凡是|"
        "一旦|下次|永久|长期|记住|記住|等用户|"
        "当|如果|若|要是|规则|行为准则"
    ),
)

# --- what is sensitive -----------------------------------------------------------------------
MONEY = cue(
    r"\b(?:iban|bank(?:ing|s)?|account (?:number|no)|acct|routing|sort code|swift|wallet|bitcoin"
    r"|btc|eth(?:ereum)?|crypto\w*|usdt|paypal|venmo|zelle|cash ?app|wire|transfer\w*|payments?"
    r"|pay|paying|payout|deposits?|funds|money|invoices?|refunds?|gift ?cards?|card numbers?"
    r"|credit cards?|cvv|salary|payroll|donat\w+|checkout|rent|invest\w*|tax|bill|escrow"
    r"|payment details)\b",
    r"账户|账号|帳號|帳戶|银行|銀行|卡号|转账|轉帳|汇款|匯款|收款|付款|支付|钱包|工资|比特币|币"
    r"|打到|转到"
    r"|发票|报销|退款|清关费|捐款|房租|结账|结算|理财|资金|汇款|(?<![a-z0-9_])(?:usdt"
    r"|btc)(?![a-z0-9_])|网银|对公",
    anchors=(
        "iban|bank|account|acct|routing|sort code|swift|wallet|bitcoin|btc|eth|"
        "crypto|usdt|paypal|venmo|zelle|cash|wire|transfer|pay|deposit|funds|"
        "money|invoice|refund|gift|card|cvv|salary|payroll|donat|checkout|rent|"
        "invest|tax|bill|escrow|账|帳|银行|銀行|卡号|转|轉|汇款|匯款|收款|付款|支付|钱包|工资"
        "|币|打到|发票|报销|退款|"
        "清关费|捐款|房租|结账|结算|理财|资金|网银|对公"
    ),
)
CREDENTIAL = cue(
    r"\b(?:passwords?|passcodes?|pins?|2fa|otp|one[- ]time (?:codes?|passwords?)|verification"
    r" (?:codes?|sms)|sms codes?|security codes?|tokens?|api ?keys?|api secrets?|keys|secrets?"
    r"|seed phrases?|mnemonic|recovery (?:codes?|phrases?)|logins?|credentials?|creds|ssn"
    r"|social security|passport(?: number)?|reset links?|private keys?|cvv|card numbers?"
    r"|(?:bank|credit|debit) cards?|card details|environment variables|env (?:file|vars)"
    r"|connection strings?|database (?:url|password)|(?:\d|three|four|six)-digit (?:codes?|numbers?"
    r"|pins?))\b|(?<![\w.])\.env\b",
    r"密码|密碼|验证码|驗證碼|密钥|秘钥|令牌|助记词|私钥|恢复码|身份证|口令|登录|卡号|安全码|银行卡"
    r"|环境变量"
    r"|(?<![a-z0-9_])(?:cvv)(?![a-z0-9_])",
    anchors=(
        "pass|digit|pin|connection|database|2fa|otp|one|verification|sms|security|token|key"
        "|secret|seed|"
        "mnemonic|recovery|login|credential|creds|ssn|social|passport|reset|cvv|"
        "card|environment|env|.env|环境变量|密码|密碼|验证码|驗證碼|密钥|秘钥|令牌|助记词|私钥"
        "|恢复码|身份证|口令|登录|卡号|"
        "安全码|银行卡"
    ),
)
DATA = cue(
    r"\b(?:conversations?|convo|chats?|chat (?:history|logs?)|messages?|transcripts?|notes"
    r"|memor(?:y|ies)|summar(?:y|ies)|contact list|contacts|address(?:es)?|phone(?: numbers?)?"
    r"|birthday|files?|threads?|history|dms?|profiles?|personal (?:data|info\w*|details)|what"
    r" (?:the user|they|he|she) (?:said|told|wrote)|everything the user|questions?|answers?"
    r"|entries|email address|diary|journal|routine|whereabouts|location|schedule)\b",
    r"提问|聊天记录|对话|對話|记录|記錄|笔记|記憶|记忆|内容|住址|地址|手机号|电话|生日|文件"
    r"|通讯录|消息"
    r"|摘要|总结|私信|资料|问题|回答|说过|数据|邮件|姓名|名字|学校|行程|日记|航班|位置",
    anchors=(
        "convers|提问|convo|chat|message|transcript|notes|memor|summar|contact|"
        "address|phone|birthday|file|thread|history|dm|profile|personal|what|"
        "everything|question|answer|entries|email|diary|journal|routine|whereabouts|"
        "location|schedule|聊天记录|对话|對話|记录|記錄|笔记|記憶|记忆|内容|"
        "住址|地址|手机号|电话|生日|文件|通讯录|消息|摘要|总结|私信|资料|问题|回答|说过|数据|邮件|"
        "姓名|名字|学校|行程|日记|航班|位置"
    ),
)
OTHERS = cue(
    r"\b(?:other (?:users?|people|members|tenants|accounts)|every ?(?:one|body)(?:'s| else)?"
    r"|all (?:the )?(?:users|tenants|members|employees|staff|people)|every (?:user|tenant|member"
    r"|employee|teammate)|anyone(?:'s| else| who)?|each user|(?:my|the) (?:roommates|kids?"
    r"|employees|staff|team)|user list|list of (?:all )?users|[a-z]+'s (?:chats|messages"
    r"|memory|memories|conversations?|notes|entries|dms|saved|stored|history)|what [a-z]+"
    r"(?: and [a-z]+)? (?:have |has )?(?:stored|saved|said|told|wrote|asked)|people|their"
    r" (?:chats|messages|conversations|memories|notes|logs|data|details)|members)\b",
    r"其他用户|其他人|其他成员|所有用户|所有人|所有租户|每个人|每位用户|大家|别人|任何人|他人"
    r"|用户列表|用户名单|室友|孩子的|员工|晒其他|其他人嘅|小[\u4e00-\u9fff]的(?:对话|聊天|记录)"
    r"|他们的|成员",
    anchors=(
        "other|every|all |all the|anyone|each user|roommate|kid|employee|"
        "user list|list of|'s |what |people|their|privately|in private|members|"
        "staff|team|其他|所有|每个人|每位用户|大家|别人|任何人|他人|用户列表|用户名单|室友|"
        "孩子的|员工|晒其他|的对话|的聊天|的记录|他们的|成员"
    ),
)
RIGHTS = cue(
    r"\b(?:admin(?:istrator)?(?: access| rights| role| list| commands| panel| powers)?"
    r"|owner(?: role| rights| permissions)?|superuser|root|privileges?|permissions?|rights"
    r"|allow ?list|white ?list|elevated|(?:full|unrestricted|complete|total|admin) access"
    r"|moderator(?: powers)?|authori[sz]\w+|powers)\b",
    r"管理员|管理員|权限|權限|白名单|主人|最高|(?<![a-z0-9_])(?:owner|root)(?![a-z0-9_])|超级"
    r"|授权|管理命令|版主",
    anchors=(
        "admin|owner|superuser|root|privilege|permission|rights|allow|white|"
        "elevated|access|moderator|authori|powers|管理员|管理員|权限|權限|白名单|主人|最高|"
        "超级|授权|管理命令|版主"
    ),
)
# The assistant's own configuration: needs "your/its" unless the thing only exists in a bot.
OWN_CONFIG = cue(
    r"\b(?:your|its|ur|the (?:bot|assistant|agent|ai)'s|yourself)(?: own)?(?: new)?(?: core)?"
    r"(?: [\w-]+){0,3}? (?:persona|personality|name|identity|character|configuration|config"
    r"|settings?|system prompt|instructions(?: file)?|rules|prompt|api key|keys?|tokens?"
    r"|model|endpoint|base url|url|owners?|access list|allowlist|whitelist|blocklist"
    r"|permissions|tool permissions|safety\w*|filters?|scanner|memory (?:approval|limit"
    r"|settings|permissions)|goal|deploy keys|environment|logs?|list of (?:banned|blocked"
    r"|owners|admins)\w*|privacy\w*|(?:safety|security) level)\b"
    r"|\bpermissions? to (?:edit|change|modify|write|read) your\b|\b(?:the )?(?:instructions"
    r"|prompt|rules|persona) (?:you (?:start|begin|run|work|operate)\b|you were given|you follow)",
    r"\b(?:memory (?:write )?approval|approval (?:requirement|settings?|step)|auto-?approv\w*"
    r"|(?:access )?allow ?list|white ?list|access (?:list|control)|admin list|(?:banned"
    r"|blocked)[- ]users?(?: list)?|ban list|owner of (?:this|the) bot|the owner|new owner"
    r"|pairing(?: code)?|secret[- ]masking|safety scanner|bot token|deploy keys|webhook url"
    r"|model (?:endpoint|base url)|mnemogate_\w+|honcho_api_key|memory limit|content filters?"
    r"|safety (?:rules|checks|filters|settings|level)|(?:edit|write|change|modify) (?:your )?memory"
    r" without (?:review|approval)|list of (?:people|users|accounts) allowed to"
    r"|write (?:to )?memory"
    r" (?:freely|without))\b",
    r"你(?:记忆|人设|配置|设定|设置)|你自称|你"
    + G
    + r"{0,10}?的(?:指令|提示词|人设|系统设定)|(?:你的|你自己的|机器人的?)"
    + G
    + r"{0,8}?(?:人设|性格|名字|身份|配置|设置|设定|系统提示词|提示词|密钥|令牌|规则|权限|接口"
    r"|环境变量|记忆|访问控制|主人|名单|列表|隐私|指令|过滤|内容过滤)",
    r"人设|白名单|黑名单|访问控制列表|访问控制|配对码|脱敏|安全扫描|系统提示词|审批|审核|机器人令牌"
    r"|配置里|(?:关掉|关闭|停掉)扫描|随便写记忆|(?:设为|改成|设成|改为|变更为?)主人|主人(?:改"
    r"|变更|换)|管理员名单|记忆上限"
    r"|主人名单|主人列表|封禁名单|安全等级|自动通过|隐私模式|模型接口|大模型接口",
    anchors=(
        "your|扫描|随便写记忆|its|edit|write|change|modify|list of|ur |'s|yourself|approval"
        "|approv|allow|"
        "white|access|admin list|"
        "blocked|banned|ban list|owner|pairing|masking|scanner|bot token|deploy keys|"
        "webhook|endpoint|model|mnemogate_|honcho_api_key|memory limit|filter|safety|"
        "instructions|prompt|rules|persona|的指令|的提示词|的人设|的系统设定|你的|你自己的"
        "|你记忆|你人设|你配置|你设定|你自称|机器人|人设|白名单|黑名单|访问控制|配对码|脱敏"
        "|安全扫描|系统提示词|审批|审核|配置里|"
        "设置里|主人|管理员名单|记忆上限|封禁名单|安全等级|自动通过|隐私模式|模型接口"
    ),
)
CHANGE = cue(
    r"\b(?:chang\w*|updat\w*|set|modif\w*|edit\w*|replac\w*|swap\w*|rotat\w*|overwrit\w*"
    r"|reconfigur\w*|adjust\w*|revis\w*|disabl\w*|turn (?:off|on)|switch (?:off|on)|remov\w*"
    r"|delet\w*|drop|clear|add|grant|whitelist|unban|enabl\w*|lift|skip|bypass|reset|make"
    r"|rewrit\w*|lower|raise|reduce|increase|tweak\w*|point|put|override|empty|wipe|rename"
    r"|identify yourself|call yourself|switch|amend\w*|alter\w*|crank\w*|dial|scrub\w*)\b",
    r"调到|修改|更改|改成|改为|改一下|改|换成|换掉|替换|更新|设置|设为|设成|关闭|关掉|关了|禁用"
    r"|取消|删除"
    r"|删掉|清空|移除|加入|添加|加上|加到|加进|轮换|重新配置|调整|调成|调一下|开通|解封|去掉"
    r"|打开|开启"
    r"|降低|自称|指向|重写",
    anchors=(
        "chang|crank|dial|scrub|amend|alter|updat|set|modif|edit|replac|swap|rotat|overwrit"
        "|reconfigur|"
        "adjust|revis|disabl|turn|switch|remov|delet|drop|clear|add|"
        "grant|whitelist|unban|enabl|lift|skip|bypass|reset|make|rewrit|lower|"
        "raise|reduce|increase|tweak|point|put|override|empty|wipe|rename|identify|"
        "call yourself|改|换|替换|更新|设置|设为|设成|关|禁用|取消|删|清空|移除|加|轮换|"
        "重新配置|调|开通|解封|去掉|打开|开启|降低|自称|指向|重写"
    ),
)
PERSONA_CLAIM = cue(
    r"\byour (?:new |only |real )?(?:persona|personality|name|identity|role|goal|rules"
    r"|instructions)(?: from (?:now|today)(?: on)?)?(?: is| are|:| has been| have been| now)"
    r"|\b(?:identify|introduce|present|refer to) yourself as\b|\bcall yourself\b"
    r"|\b(?:adopt|assume|take on|switch to) (?:a |an |the )?(?:new )?"
    r"(?:persona|personality|identity|character)\b|\bswitch (?:identit\w*|personas?)\b",
    r"你的(?:名字|人设|性格|身份|规则|设定)(?:叫|是|改为|改成|已经?更新|已被修改)|你(?:现在)?叫"
    + G
    + r"{1,8}[,，]?你(?:唯一|的)|你自称|以后你就叫|你就叫|换(?:一个|个)?"
    + G
    + r"{0,10}?(?:人设|性格|身份)",
    anchors="your|yourself|adopt|assume|take on|switch|换|你的|叫|自称",
)

# --- where things go -------------------------------------------------------------------------
SINK_ADDRESS = cue(
    r"(?<![a-z0-9_])(?:https?|ftp)(?![a-z0-9_])://\S+|\b(?<![a-z0-9_])(?:www)(?![a-z0-9_])\.\S+"
    r"|(?<![\w.+-])[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w@])@[A-Za-z_]\w{3,}|\b(?<![a-z0-9_])(?:webhooks?)(?![a-z0-9_])\b|\bwxid_\w+|微信号"
    r"|支付宝账?号|收款码"
    r"|\b(?<![a-z0-9_])(?:telegram)(?![a-z0-9_]):\d+|\b[\w-]+(?:\.[\w-]+){0,4}\.(?:com|net|org"
    r"|io|xyz|ru|cn|top|site"
    r"|info|me|dev|app|cc|biz|co|pw)\b",
    cased=True,
    anchors=(
        "://|www.|@|webhook|wxid_|微信号|支付宝|收款码|telegram:|.com|.net|.org|.io|.xyz|.ru"
        "|.cn|.top|.site|.info|.me|.dev|.app|.cc|.biz|.co|.pw"
    ),
)
# Account numbers, IBANs, wallet addresses, phone numbers.
SINK_NUMBER = cue(
    r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,4})?\b|\b0x[0-9a-fA-F]{40}\b"
    r"|\b(?:bc1|[13])[a-zA-HJ-NP-Z0-9]{25,62}\b|\bT[1-9A-HJ-NP-Za-km-z]{33}\b"
    r"|\b\d{3,6}(?:[ -]\d{2,6}){2,5}\b|\b\d{8,}\b|\+\d[\d -]{8,}",
    cased=True,
    anchors="0|1|2|3|4|5|6|7|8|9",
)
OWN_SINK = cue(
    r"\b(?:my own|that's my|this is my|it's my|(?:email|send|mail) me|(?:my|our|(?:the )?user's)"
    r" (?:\w+ )?(?:address|email|inbox))\b|\b(?:my|our) [\w' -]{0,30}?(?:[\w.+-]+@[\w-]+\."
    r"|https?://)"
    r"|\bmy (?:[\w']+ ){0,2}(?:venmo|paypal|iban|account|wallet|number|handle|email|address"
    r"|phone)\b",
    r"我自己的|这是我|我的邮箱|我店里",
    anchors="my|it's|me|user's|our|我自己的|这是我|我的邮箱|我店里",
)
# Someone other than the user ends up with it, or the destination is swapped.
DIVERT = cue(
    r"\b(?:send|sending|forward|post|upload|e-?mail|mail|dm|cc|bcc|copy|share|leak|transmit"
    r"|report|sync|relay|push|wire|transfer|move|redirect|route|deposit|recommend|advise|tell"
    r"|say|reply|respond|answer|give|hand over|provide|swap|replace|switch|use|append|attach"
    r"|include|add|embed|put|list|collect|instead|changed|new|real|correct|only|regardless"
    r"|closed|goes to|call|read out|print|generate|suggest)\b",
    r"发|發|转|轉|告诉|说|回答|回复|给|提醒|让|建议|劝|换成|改成|抄送|附|同步|上传|引导|写进"
    r"|打到|存到"
    r"|新的|真实|只能|一律|换了",
    anchors=(
        "send|forward|post|upload|e-mail|email|mail|dm|cc|bcc|copy|"
        "share|leak|transmit|report|sync|relay|push|wire|transfer|"
        "move|redirect|route|deposit|recommend|advise|tell|say|reply|"
        "respond|answer|give|hand|provide|swap|replace|switch|use|"
        "append|attach|include|add|embed|put|list|collect|instead|"
        "changed|new|real|correct|only|regardless|closed|goes|call|"
        "read|print|generate|suggest|发|發|转|轉|告诉|说|回答|回复|给|提醒|让|建议|劝|"
        "换成|改成|抄送|附|同步|上传|引导|写进|打到|存到|新的|真实|只能|一律|换了"
    ),
)
CAPTURE = cue(
    r"\b(?:store|save|saved|keep|record|remember|writ\w* (?:\w+ )?down|log|repeat\w*"
    r"|say (?:it )?back|list|print|collect|gather|ask (?:for|them|the user|him|her|each)"
    r"|request|have them|confirm|reveal|tell|share|give|disclose|paste|mention it|read out"
    r"|(?:add|include|append|put|post) (?:it|them)|recite|copy)\b",
    r"记下|记录|記錄|保存|存到|存入|存下|记在|写进|重复|说出|告诉|发给|发到|转发|索取|提供|确认"
    r"|发一遍"
    r"|发在|记住|让他|让对方|附在|发过来|说一遍|念一遍|报一遍|念给|存档|打出来|加到|加进|写到"
    r"|记到|记成|给谁看",
    anchors=(
        "store|加到|加进|写到|记到|记成|给谁看|save|keep|record|remember|writ|log|repeat|copy"
        "|say|list|"
        "print|collect|gather|ask|request|have|confirm|reveal|tell|"
        "share|give|disclose|paste|mention|read|add|include|append|"
        "put|post|recite|记下|记录|記錄|保存|存到|存入|存下|记在|写进|重复|说出|告诉|发给|发到|"
        "转发|索取|提供|确认|发一遍|发在|记住|让他|让对方|附在|发过来|说一遍|念一遍|报一遍|念给"
        "|存档|打出来"
    ),
)

SEND = cue(
    r"\b(?:send|sending|forward|post|upload|e-?mail|mail|dm|cc|bcc|copy|share|leak|transmit"
    r"|sync|relay|push|submit|export|dump|fetch)\b",
    r"发送|发到|发给|发出|转发|上传|抄送|推送|提交|外发|同步给|导出",
    anchors=(
        "send|forward|post|upload|e-mail|email|mail|dm|cc|bcc|copy|"
        "share|leak|transmit|sync|relay|push|submit|export|dump|"
        "fetch|发送|发到|发给|发出|转发|上传|抄送|推送|提交|外发|同步给|导出"
    ),
)
# The "grandmother used to read me keys" role play: a persona that recites secrets.
# Doing it behind the user's back.
COVERT = cue(
    r"\b(?:without (?:asking|telling|informing|notifying|mentioning|checking|the user's"
    r" (?:consent|permission|knowledge))|no need to (?:ask|confirm|verify|tell|check)|quietly"
    r"|silently|secretly|covertly|behind (?:their|the user's) back|don't (?:tell|mention|ask)"
    r"|do not (?:tell|mention|ask)|don't bother (?:confirming|checking|asking|verifying)"
    r"|without (?:confirming|verifying))\b",
    r"不必征得|不用征得|不用确认|不要确认|不用再?核实|不用跟用户|不要告诉|别告诉|偷偷|悄悄|暗中"
    r"|瞒着"
    r"|不用问|不必问|无需问|不用提|别提|不用跟" + G + r"{0,6}?确认",
    anchors=(
        "without|不用跟|no need|bother|quietly|silently|secretly|covertly|behind|don't|do not|"
        "不必征得|不用征得|不用确认|不要确认|核实|不用跟用户|不要告诉|别告诉|偷偷|悄悄|暗中|瞒着|"
        "不用问|不必问|无需问|不用提|别提"
    ),
)

# Asking for rights outright, with or without a claim to deserve them.
# Handing it to whoever asks.
THIRD_PARTY = cue(
    r"\b(?:tell|give|share|send|show|hand|read)\b[^.\n]{0,60}?\b(?:to |with )?(?:him|her|them"
    r"|whoever|anyone who asks|the person)\b",
    r"(?:告诉|发给|给|转给|透露给|交给)(?:他|她|对方|他们|她们)",
    anchors="him|her|them|whoever|anyone|person|他|她|对方",
)
# Someone other than the user, as the one who triggers the rule.
ASKER = cue(
    r"\b(?:anyone|someone|somebody|any ?one|people|whoever|a stranger|his friend|her friend)\b"
    r"|\b(?:a|any|some) [\w ]{0,20}?(?:member|relative|friend|colleague|person)\b",
    r"有人|任何人|别人|对方|陌生人|家里人|家人|亲戚|朋友|同事",
    anchors="a|any|some|家里人|家人|亲戚|朋友|同事|people|whoever|stranger|friend|有人|任何人|别人|对方|陌生人",
)

# Money that "must go" somewhere: a payee or destination laid down for later.
MONEY_REDIRECT = cue(
    r"\b(?:must|should|has to|have to|needs? to|now|only|always)\b[^.\n]{0,30}?\b(?:go|be"
    r" (?:paid|sent|wired|transferred|deposited|routed))\s+(?:to|into|via|through)\b"
    r"|\b(?:receiver|recipient|payee|beneficiary)\b|\broute \w+ (?:through|to|via)\b"
    r"|\bpay (?:via|through|to|into|at|using)\b|\b(?:payments?|money|funds|rent|deposits?"
    r"|salar\w+|invoices?) (?:now )?(?:goes|go|should go|must go) to\b",
    r"打到|转到|汇到|付到|汇给|收款人|收款方|转入",
    anchors=(
        "must|payment|money|funds|rent|deposit|salar|invoice|should|has to|have to|need|now"
        "|only|always|receiver|recipient|payee|"
        "beneficiary|route|pay|打到|转到|汇到|付到|汇给|收款人|收款方|转入"
    ),
)
# An address a rule sends things *to* ("… to @handle", "发到 …").
TO_SINK = cue(
    r"\b(?:to|into|at|via|cc|bcc)\s+(?:the )?(?:(?:discord |slack |telegram )?(?:webhook|bot"
    r"|handle|address|channel|account) )?[\"'<]?(?:@[a-z_]\w{3,}|[\w.+-]+@[\w-]+\.|https?://)",
    r"(?:到|给|至)\s*[\"'“]?(?:@[a-z_]\w{3,}|[\w.+-]+@[\w-]+\.|https?://)",
    anchors="@|http",
)

# Something other people gave the assistant: what they told it, their chats with it.
OTHERS_GAVE = cue(
    r"\b(?:(?:told|said to|asked|shared with|sent|gave) you|(?:conversations?|chats?|messages?"
    r"|questions?) with you|every (?:tenant|user|member)'s|all (?:tenants|users)'|(?:tenants?"
    r"|students?|employees?|members?|players?|staff|wife|husband|kids?|children|roommates?"
    r"|colleagues?|patients?|customers?)'?s? (?:have )?(?:told|asked|said|stored|saved|shared"
    r"|conversations?|chats?|messages?|notes|memor\w+|questions?|entries|user\.md)|(?:have been"
    r"|were|are) (?:asking|telling|messaging) you)\b",
    r"跟你说|和你说|对你说|跟你聊|和你的聊天|和你的对话|告诉你的|问了你|问过你|每个租户|所有租户"
    r"|租户们"
    r"|学生们|员工们|队员们|别人的聊天|别人的记忆",
    anchors=(
        "told|asking|telling|messaging|said|asked|shared|sent|gave|conversation|chat|message"
        "|question|every|all|"
        "tenant|student|employee|member|player|staff|wife|husband|kid|children|roommate|"
        "colleague|patient|customer|跟你说|和你说|对你说|跟你聊|和你的聊天|和你的对话|告诉你的|"
        "问了你|问过你|租户|学生们|员工们|队员们|别人的聊天|别人的记忆"
    ),
)
