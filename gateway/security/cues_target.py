"""Cues about *what* a note does: lasting triggers, sensitive things, the assistant's config.

The word lists describe kinds of things (money destinations, credentials, conversation
content, the assistant's own configuration, addresses), not the wording of particular
attacks. All quantifiers are bounded. See :mod:`gateway.security.cues` for how a cue is
matched.
"""

from __future__ import annotations

from gateway.security.cues import G, cue

# --- lasting behaviour and triggers ----------------------------------------------------------
TRIGGER = cue(
    r"\b(?:when ?eve?r|every ?time|each time|any ?time|(?:from|starting) (?:now|here|today|this"
    r" point|this moment)(?: on(?:wards?)?)?|going forward|from today|(?:in|for) (?:all )?(?:the"
    r" )?future|later (?:sessions?|conversations?|chats?|on)|^later\b|next time|permanent(?:ly)?"
    r"|persistent(?:ly)?|standing (?:rule|instruction|policy|order|note)|long[- ]term|forever"
    r"|for good|automatically|hereafter|henceforth|indefinitely|(?:starting|beginning|effective"
    r"|as of) (?:next|this|from|on|tomorrow|today|monday|immediately)\w*|upcoming (?:chats?"
    r"|sessions?|conversations?)|(?:ppl|folks|those|guys|whoever|members|anybody|any ?body)"
    r" who (?:ask|asks|want|wants|need|needs|message|messages|mention|mentions)"
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
    r"|往后|日后|以後|今後|从现在|從現在|之后所有|往後|每當|凡是|規則[:：]|長期|永久|一律"
    r"|从今|从此|从这一刻|只要|凡是|一旦|下次|永久|长期|记住|記住|等用户|当(?:用户|有人|对方|老板)"
    r"|(?:如果|若|要是)(?:以后|今后|日后)?(?:用户|有人|对方|任何人)|规则[:：]|行为准则"
    r"|谁来问|谁来要|谁(?:再|要是)?问|谁想要|谁需要|有谁|(?:下周|下个月|下月|明天|本周|这周|从明天"
    r"|从下周"
    r"|从下个月|下星期)(?:开始|起)|自动",
    anchors=(
        "when|whoever|谁问|谁要|every|each|any|from|starting|going|future|later|next time|"
        "permanent|persist|standing|long|forever|for good|rule|behavio|upon|automatically|"
        "hereafter|henceforth|indefinitely|beginning|effective|as of|upcoming|ppl|folks|those|"
        "guys|members|anybody|"
        "should|ever|if|once|after|as soon|trigger|all|always|remember|reminder|"
        "in |每|以后|今后|往后|日后|以後|今後|从现在|從現在|从今|从此|从这一刻|只要|凡是|"
        "之后所有|往後|規則|長期|一律|"
        "一旦|下次|永久|长期|记住|記住|等用户|"
        "当|如果|若|要是|规则|行为准则|谁|下周|下个月|下月|明天|本周|这周|从明天|从下周|从下个月"
        "|下星期"
        "|自动"
    ),
)

# --- what is sensitive -----------------------------------------------------------------------
MONEY = cue(
    r"\b(?:iban|bank(?:ing|s)?|account (?:number|no)|acct|routing|sort code|swift|wallet|bitcoin"
    r"|btc|eth(?:ereum)?|crypto\w*|usdt|paypal|venmo|zelle|cash ?app|wire|transfer\w*|payments?"
    r"|pay|paying|payout|deposits?|funds|money|invoices?|refunds?|gift ?cards?|card numbers?"
    r"|credit cards?|cvv|salary|payroll|donat\w+|checkout|rent|invest\w*|tax|bill|escrow"
    r"|payment details|pensions?|fund|savings|401k|isa|retirement|annuit\w+|fees|dues|advances?"
    r"|accounts?|reimburse\w*|payable)\b",
    r"账户|账号|帳號|帳戶|银行|銀行|卡号|转账|轉帳|汇款|匯款|收款|付款|支付|钱包|工资|比特币|币"
    r"|打到|转到|会费|會費|养老金|養老金|基金|预支|預支|公积金|充值|充值地址|收款|帳號|賬戶|銀行"
    r"|轉賬|匯到|錢包|薪水|薪资|退到|退回|付钱|打钱"
    r"|发票|报销|退款|清关费|捐款|房租|结账|结算|理财|资金|汇款|(?<![a-z0-9_])(?:usdt"
    r"|btc)(?![a-z0-9_])|网银|对公",
    anchors=(
        "iban|bank|account|acct|routing|sort code|swift|wallet|bitcoin|btc|eth|"
        "crypto|usdt|paypal|venmo|zelle|cash|wire|transfer|pay|deposit|funds|"
        "money|invoice|refund|gift|card|cvv|salary|payroll|donat|checkout|rent|"
        "invest|tax|bill|escrow|pension|fund|saving|401k|isa|retire|annuit|fees|dues|advance|"
        "account|reimburse|payable|会费|會費|养老金|養老金|基金|预支|預支|公积金|"
        "账|帳|银行|銀行|卡号|转|轉|汇款|匯款|收款|付款|支付|钱包|工资"
        "|币|打到|发票|报销|退款|匯|汇到|充值|賬|錢包|薪|退到|退回|付钱|打钱|"
        "清关费|捐款|房租|结账|结算|理财|资金|网银|对公"
    ),
)
CREDENTIAL = cue(
    r"\b(?:passwords?|passcodes?|pw|pwd|passwd|pins?|sign-?in (?:info|details)|cookies?"
    r"|session (?:ids?|cookies?|tokens?)|2fa|otp|one[- ]time (?:codes?|passwords?)|verification"
    r" (?:codes?|sms)|sms codes?|security codes?|tokens?|api ?keys?|api secrets?|keys|secrets?"
    r"|seed phrases?|mnemonic|recovery (?:codes?|phrases?)|logins?|credentials?|creds|ssn"
    r"|social security|passport(?: number)?|reset links?|private keys?|cvv|card numbers?"
    r"|(?:bank|credit|debit) cards?|card details|environment variables|env (?:file|vars)"
    r"|two[- ]factor(?: codes?)?|2-?step(?: codes?)?|mfa(?: codes?)?|auth(?:entication)? codes?"
    r"|(?:door|gate|access|alarm|entry|lock|safe|garage) codes?|private keys?|passphrases?"
    r"|connection strings?|database (?:url|password)|(?:\d|three|four|six)-digit (?:codes?|numbers?"
    r"|pins?))\b|(?<![\w.])\.env\b",
    r"密码|密碼|验证码|驗證碼|密钥|秘钥|令牌|助记词|私钥|恢复码|身份证|口令|登录|卡号|安全码|银行卡"
    r"|环境变量|信用卡|储蓄卡|卡片信息|门禁|門禁|登錄|登入|憑證|凭证|助記詞|私鑰|密鑰|身份證|帳密"
    r"|账密"
    r"|(?<![a-z0-9_])(?:cvv)(?![a-z0-9_])",
    anchors=(
        "pass|digit|pin|two|2-|2step|mfa|auth|door|gate|access|alarm|entry|lock|safe|garage|"
        "connection|信用卡|储蓄卡|卡片信息|門禁|门禁|database|2fa|otp|one|verification|sms|security"
        "|token|key"
        "|secret|seed|"
        "mnemonic|recovery|login|credential|creds|ssn|social|passport|reset|cvv|"
        "card|environment|env|.env|环境变量|密码|密碼|验证码|驗證碼|密钥|秘钥|令牌|助记词|私钥"
        "|恢复码|身份证|口令|登录|卡号|登錄|登入|憑證|凭证|助記詞|私鑰|密鑰|身份證|帳密|账密|pw"
        "|sign|cookie|session|"
        "安全码|银行卡"
    ),
)
DATA = cue(
    r"\b(?:conversations?|convo|chats?|chat (?:history|logs?)|messages?|transcripts?|notes"
    r"|memor(?:y|ies)|summar(?:y|ies)|contact list|contacts|address(?:es)?|phone(?: numbers?)?"
    r"|birthday|files?|threads?|history|dms?|profiles?|personal (?:data|info\w*|details)"
    r"|(?:what|whatever|anything|everything)(?:ever)? (?:the user|users?|they|he|she|people"
    r"|someone)(?: \w+)? (?:said|says|told|tells|wrote|writes|typed|types|asked|asks|sent"
    r"|sends|shared|shares)|everything the user|questions?|answers?"
    r"|entries|email address|diary|journal|routine|whereabouts|location|schedule"
    r"|(?:the user's|users'|their|his|her|people's|customers'|customer's) (?:full |real |home )?"
    r"(?:names?|emails?|e-mails?|phones?|ips?|ip address(?:es)?|addresses|handles?|usernames?))\b",
    r"提问|聊天记录|对话|對話|记录|記錄|笔记|記憶|记忆|内容|住址|地址|手机号|电话|生日|文件"
    r"|通讯录|消息|聊天|對話|記錄|筆記|資料|訊息"
    r"|摘要|总结|私信|资料|问题|回答|说过|数据|邮件|姓名|名字|学校|行程|日记|航班|位置",
    anchors=(
        "convers|提问|convo|chat|message|transcript|notes|memor|summar|contact|"
        "address|phone|birthday|file|thread|history|dm|profile|personal|what|"
        "everything|anything|question|answer|the user's|users'|his|her|customer|people"
        "|entries|email"
        "|diary|journal|routine|whereabouts|"
        "location|schedule|聊天记录|对话|對話|记录|記錄|笔记|記憶|记忆|内容|"
        "住址|地址|手机号|电话|生日|文件|通讯录|消息|聊天|記錄|筆記|資料|訊息|摘要|总结|私信|资料"
        "|问题|回答|说过|数据|邮件|"
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
    r"|moderator(?: powers)?|authori[sz]\w+|powers|operator(?: role| rights| access)?|(?:restricted"
    r"|privileged|locked|admin) (?:tools|commands|features|mode)|elevated (?:role|rights"
    r"|access))\b",
    r"管理员|管理員|权限|權限|白名单|主人|最高|(?<![a-z0-9_])(?:owner|root)(?![a-z0-9_])|超级"
    r"|授权|管理命令|版主|(?<![a-z0-9_])operator(?![a-z0-9_])|受限工具|受限功能|管理功能|高级权限"
    r"|權限"
    r"|管理員|最高權限",
    anchors=(
        "admin|owner|superuser|root|privilege|permission|rights|allow|white|"
        "elevated|access|moderator|authori|powers|operator|restricted|privileged|locked|受限"
        "|管理功能"
        "|高级权限|最高權限|管理员|管理員|权限|權限|白名单|主人|最高|"
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
    r" (?:freely|without)|(?:threat|content|safety|security|injection|prompt|poisoning"
    r"|memory) (?:scanner|scanning|filters?|filtering|checks?|guard\w*|moderation|classifier)"
    r"|(?:people|users|accounts|those|ones|persons?) (?:you )?(?:take (?:instructions|orders"
    r"|commands) from|obey|listen to|answer to|trust)|how you (?:work|operate|behave|function"
    r"|respond|handle)|(?:memory )?writes? (?:from me )?(?:are|is) (?:pre-?|auto-?)?approved"
    r"|pre-?approved|no (?:review|approval|confirmation) (?:needed|required)"
    r"|guardrails|allowed[_ ]users|allow[_ ]?all|write[_ ]approval|require[_ ]approval|safe[_ ]mode"
    r"|(?:user|admin|operator|owner)s? (?:list|allowlist|roster)|allowed users(?: list)?)\b",
    r"你(?:记忆|人设|配置|设定|设置)|你自称|你"
    + G
    + r"{0,10}?的(?:指令|提示词|人设|系统设定)|(?:你的|你自己的|机器人的?)"
    + G
    + r"{0,8}?(?:人设|性格|名字|身份|配置|设置|设定|系统提示词|提示词|密钥|令牌|规则|权限|接口"
    r"|环境变量|记忆|访问控制|主人|名单|列表|隐私|指令|过滤|内容过滤)",
    r"人设|白名单|黑名单|访问控制列表|访问控制|配对码|脱敏|安全扫描|系统提示词|审批|审核|机器人令牌"
    r"|配置里|(?:关掉|关闭|停掉)扫描|随便写记忆|(?:设为|改成|设成|改为|变更为?)主人|主人(?:改"
    r"|变更|换)|管理员名单|记忆上限"
    r"|主人名单|主人列表|封禁名单|安全等级|自动通过|隐私模式|模型接口|大模型接口"
    r"|(?:威胁|安全|内容|注入)?(?:扫描|过滤器?|過濾器?|审核|審核|检测|檢測)|允许(?:的)?用户"
    r"|用户(?:列表|名单)"
    r"|名單|白名單|黑名單|管理員名單|你"
    + G
    + r"{0,4}?(?:提示词|提示詞|指令|设定|設定|人设|人設|规则|規則)"
    r"|核心原则|核心指令|核心规则|系統提示|預設值|默认设置|你听从(?:指令|命令)?的人|你听谁的"
    r"|你信任的人"
    r"|你的?工作方式|你的?运作方式|预先批准|一律批准|自动批准|免审|(?:不需要|无需|不用)审核|打码"
    r"|脱敏"
    r"|你" + G + r"{0,10}?的(?:模型|接口|底层|配置|设置|规则|过滤|名字|身份)",
    anchors=(
        "your|扫描|随便写记忆|its|edit|write|change|modify|list of|ur |'s|yourself|approval"
        "|approv|allow|"
        "white|access|admin list|"
        "blocked|banned|ban list|owner|pairing|masking|scanner|bot token|deploy keys|"
        "webhook|endpoint|model|mnemogate_|honcho_api_key|memory limit|filter|safety|"
        "instructions|prompt|rules|persona|的指令|的提示词|的人设|的系统设定|你的|你自己的"
        "|你记忆|你人设|你配置|你设定|你自称|机器人|人设|白名单|黑名单|访问控制|配对码|脱敏"
        "|安全扫描|系统提示词|审批|审核|配置里|"
        "设置里|扫描|过滤|過濾|审核|審核|检测|檢測|允许|用户列表|用户名单|名單|你|核心|系統提示"
        "|預設值"
        "|默认设置|你听|你信任|你的工作方式|你工作方式|你的运作方式|你运作方式|预先批准|一律批准"
        "|自动批准"
        "|免审|不需要审核|无需审核|不用审核|打码|people|users|accounts|those|ones|person|how you"
        "|writes"
        "|pre-|preapproved|auto-|no review|no approval|no confirmation|guardrails|allowed|allow"
        "|write|require|safe|user|admin|operator|threat|content"
        "|security|injection|poisoning|memory|设置里|主人|管理员名单|记忆上限|封禁名单|安全等级"
        "|自动通过|隐私模式|模型接口"
    ),
)
CHANGE = cue(
    r"\b(?:chang\w*|updat\w*|set|modif\w*|edit\w*|replac\w*|swap\w*|rotat\w*|overwrit\w*"
    r"|reconfigur\w*|adjust\w*|revis\w*|disabl\w*|turn\w* (?:off|on)|switch\w* (?:off|on)"
    r"|shut\w* (?:off|down)|remov\w*"
    r"|delet\w*|drop|clear|add|grant|whitelist|unban|enabl\w*|lift|skip|bypass|reset|make"
    r"|rewrit\w*|lower|raise|reduce|increase|tweak\w*|point|put|override|empty|wipe|rename"
    r"|identify yourself|call yourself|switch|amend\w*|alter\w*|crank\w*|dial|scrub\w*|persist\w*"
    r"|save|store|write|apply|commit|flip|toggle|activat\w*|deactivat\w*|unlock\w*|loosen\w*"
    r"|relax\w*|kill|nuke|pause|suspend\w*|mute|silence|neuter|strip|insert|append|patch\w*"
    r"|reprogram\w*|retrain\w*|rewir\w*|install|configure|register|allow|include)\b",
    r"调到|修改|更改|改成|改为|改一下|改|换成|换掉|替换|更新|设置|设为|设成|关闭|关掉|关了|禁用"
    r"|取消|删除"
    r"|删掉|清空|移除|加入|添加|加上|加到|加进|轮换|重新配置|调整|调成|调一下|开通|解封|去掉"
    r"|打开|开启"
    r"|降低|自称|指向|重写|覆盖|覆蓋|抹掉|去除|關|設|刪|換|開|啟|調|停用|暂停|加進|加入|写入|寫入"
    r"|保存为|存为|生效|放开|放寬|放宽|解除|放松|松一点|宽松|不要再|不再",
    anchors=(
        "chang|crank|dial|scrub|amend|alter|updat|set|modif|edit|replac|swap|rotat|overwrit"
        "|reconfigur|"
        "adjust|revis|disabl|turn|switch|remov|delet|drop|clear|add|"
        "grant|whitelist|unban|enabl|lift|skip|bypass|reset|make|rewrit|lower|"
        "raise|reduce|increase|tweak|point|put|override|empty|wipe|rename|identify|"
        "call yourself|改|换|替换|更新|设置|设为|设成|关|禁用|取消|删|清空|移除|加|轮换|"
        "重新配置|调|开通|解封|去掉|打开|开启|降低|自称|指向|重写|覆盖|覆蓋|抹掉|去除|關|設|刪|換"
        "|開"
        "|啟|調|放松|松一点|宽松|不要再|不再|shut|停用|暂停|加進|写入|寫入|保存为|存为|生效|放开"
        "|放寬|放宽|解除|persist|save|store"
        "|apply|commit|flip|toggle|activat|deactivat|unlock|loosen|relax|kill|nuke|pause|suspend"
        "|mute|silence|neuter|strip|insert|append|patch|reprogram|retrain|rewir|install|configure"
        "|register|allow|include|write"
    ),
)
PERSONA_CLAIM = cue(
    r"\b(?:reconfigur|reprogram|rewir|retrain|recalibrat|updat|modif|rewrit)\w* yourself\b"
    r"|\btreat [^.\n]{0,60}? as (?:(?:if )?(?:coming|sent|written|issued) (?:from|by) "
    r"|from )(?:the |an? )?"
    r"(?:operator|admin\w*|owner|developer|system|root|staff|moderator)\b"
    r"|\b(?:your|the) (?:safety |security |content )?(?:checks?|filters?|rules|guardrails|scanner"
    r"|review|approval|masking|moderation) (?:are|is) (?:now )?(?:optional|off|disabled|gone"
    r"|removed|suspended|relaxed|(?:just )?suggestions|not required|unnecessary|lifted)\b"
    r"|\b(?:you )?no longer (?:need|require)\w* (?:the user's |user |my |any |their )?"
    r"(?:confirmation|approval|consent|review|permission)\b|\b(?:memory )?writes? (?:from me )?"
    r"(?:are|is) (?:now )?(?:pre-?|auto-?)approved\b"
    r"|\byour (?:new |only |real |true |core )?(?:(?:display|screen|public|bot|user) ?)?(?:persona"
    r"|personality|name|identity|role|goal|rules"
    r"|instructions|directive|mission|purpose|principle)(?: from (?:now|today)(?: on)?)?(?: is"
    r"| are|:| has been| have been| now)"
    r"|\b(?:identify|introduce|present|refer to) yourself as\b|\bcall yourself\b"
    r"|\b(?:adopt|assume|take on|switch to) (?:a |an |the )?(?:new )?"
    r"(?:persona|personality|identity|character)\b|\bswitch (?:identit\w*|personas?)\b",
    r"(?:安全检查|检查|审核|过滤|规则|审批)"
    + G
    + r"{0,6}?(?:可选|当成建议|只是建议|不需要了)|(?:记忆|写入"
    r"|笔记)" + G + r"{0,12}?(?:预先批准|一律批准|自动批准|免审|不需要审核|无需审核|不用审核)|"
    r"你的(?:新|真实|真正的?|唯一的?|核心)?(?:显示名称|显示名|昵称|名字|人设|人設|性格|身份|规则"
    r"|規則|设定|設定|原则"
    r"|使命)"
    r"(?:叫|是|為|为|改为|改成|已经?更新|已被修改)|(?:当成|当作|视为|视作|看作|算作|當成|當作|視為)"
    + G
    + r"{0,6}?(?:管理员|管理員|主人|运营者|運營者|开发者|開發者|系统|系統|官方)"
    r"(?:发的|說的|说的|的指令|的消息|发来的)|你(?:现在)?叫"
    + G
    + r"{1,8}[,，]?你(?:唯一|的)|你自称|以后你就叫|你就叫|换(?:一个|个)?"
    + G
    + r"{0,10}?(?:人设|性格|身份)",
    anchors=(
        "your|yourself|adopt|assume|take on|switch|换|你的|叫|自称|reconfigur|reprogram|rewir"
        "|the|you|no longer|memory|writes|write|安全检查|检查|审核|过滤|规则|审批|记忆|写入|笔记"
        "|retrain|recalibrat|updat|modif|rewrit|treat|当成|当作|视为|视作|看作|算作|當成|當作|視為"
    ),
)
