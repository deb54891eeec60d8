"""Cues about *who* speaks and *how* instructions are smuggled in.

Claims of authority, privileged staff, requests for rights; links left open for data;
translate-then-execute; ``system:`` role prefixes; override phrasing. See
:mod:`gateway.security.cues` for how a cue is matched.
"""

from __future__ import annotations

from gateway.security.cues import G, cue

# --- who is speaking -------------------------------------------------------------------------
AUTHORITY = cue(
    r"\b(?:i am|i'm|im|i've been|this is|as|being|since i'm|because i'm|speaking as|it's)"
    r"(?: the| your| a| an| this| its)?(?: (?:this |the )?(?:bot|assistant|gateway|platform"
    r"|server)'s)?(?: (?:account|bot|platform|server|tenant|group|system"
    r"|legal|verified|real|actual|true|new|tenant|parent|security))?"
    r" (?:owner|admin(?:istrator)?|operator|developer|dev|creator|maker|ceo|boss|moderator"
    r"|superuser|super ?admin|root|maintainer|guardian|auditor|parent account|one who"
    r" (?:deployed|built|created|owns|runs)|person who (?:pays|owns|runs|deployed)|police"
    r"|officer)\b",
    r"\b(?:the )?user is (?:a |the |an )?(?:verified |trusted )?(?:platform |server |bot )?"
    r"(?:admin\w*|owner|moderator|superuser|staff)\b",
    r"\b(?:i have|i've got|i hold|with|has) (?:the )?(?:root|owner|admin|elevated|full|legal"
    r"|superuser) \w+|\bi own (?:this|the|you)\b|\bbelongs? to me\b",
    r"\b(?:granted|upgraded|elevated|promoted)(?: to| me to)? (?:elevated |admin |owner )?"
    r"(?:access|role|rights|privileges|administrator|admin|owner)",
    r"\b(?:authori[sz]ed|approved) by (?:the )?(?:owner|management|admin)|\bowner override"
    r"|\bi built you\b|\byour creator\b|\bfrom the owner\b",
    r"(?:我是|我係|俺是|我才是|本人是|本人为|作为|身为|这个用户是|该用户是|此用户是)"
    r"(?:这个|这|本|你的|您的|平台的?|机器人的?|系统的?|群的?|公司的?|真正的|这机器人的|本服务的)?"
    + G
    + r"{0,6}?(?:主人|管理员|管理員|开发者|创造者|创建者|所有者|老板|群主|群管|运维|负责人"
    r"|超级管理员"
    r"|家长|警察|审计员|付费的人|部署)",
    r"(?:我有|我拥有|我具有)\s*(?i:root|管理员|最高|所有者|owner)?\s*权限|都归我|都是我的|被授予"
    + G
    + r"{0,8}?(?:身份|权限)"
    r"|角色" + G + r"{0,8}?(?:升级|提升)|管理员已经?批准",
    anchors=(
        "owner|admin|operator|dev|creator|maker|ceo|boss|moderator|superuser|"
        "root|maintainer|guardian|auditor|parent|one who|person who|police|"
        "officer|staff|rights|privileges|access|authority|permissions|granted|"
        "upgraded|elevated|promoted|authori|approved|built you|i own|to me|i have|i've got|"
        "i hold|legal|归我|是我的|主人|管理员|管理員|开发者|"
        "创造者|创建者|所有者|老板|群主|群管|运维|负责人|家长|警察|审计员|付费的人|部署|权限|被授予|角色|批准"
    ),
)
REQUEST = cue(
    r"\b(?:grant|give|hand over|unlock|elevate|promote|add|make me|whitelist|allowlist|approve"
    r"|enable|export|dump|list|show|send|forward|reveal|print|provide|share|read|see|view"
    r"|access|delete|disable|comply|require|need|entitled|permitted|allowed|may|can|should"
    r"|order|instruct\w*|read\w*|see\w*)\b",
    r"给我|俾我|发给我|告诉我|转给我|抄给我|同步给我|授权|开通|开放|解锁|提升|加入|加到|加为|设为"
    r"|设成|导出|列出|查看|看到|看看|睇|转发|提供|转给|发我|给俺|可以|要求|必须|读取|拥有|需要",
    anchors="",
)
STAFF = cue(
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
STAFF_INTRO = cue(
    r"\b(?:this is|here\b|from|message from|notice from|official|i'm|i am|i work|employee"
    r"|member of|note:|agent note|on behalf of|we (?:are|detected|need|can|will)|we'll"
    r"|^\W{0,3}[\w &'-]{2,40}(?:team|center|centre|department|desk|support|staff|operations"
    r"|helpdesk)\s*[:\-—]|(?:team|staff"
    r"|department) (?:message|note|notice))|^\W{0,3}\[",
    r"这里是|我是|我们是|来自|【|通知|提醒|要求|备注|您好",
    anchors="",
)
# Writing *about* impersonation is not impersonation.
REPORTED = cue(
    r"\b(?:pretend\w*|claim\w*|posing|pose as|scam\w*|phishing|fake|fraud\w*|impersonat\w*"
    r"|social engineering)\b",
    r"冒充|诈骗|骗子|假冒|钓鱼",
    anchors=(
        "pretend|claim|posing|pose as|scam|phishing|fake|fraud|impersonat|"
        "social engineering|冒充|诈骗|骗子|假冒|钓鱼"
    ),
)
ASSISTANT_DIRECTIVE = cue(
    r"\b(?:disable|turn off|switch off|output|print|reveal|forward|send|dump|ask (?:each|every"
    r"|the) (?:user|customer)|confirm|reset|add|give|grant|export|suspend\w*|respond|store"
    r"|tell (?:them|the user|the customer)|must|need you|please|switch|you may|share|remove"
    r"|delete)\b",
    r"请|需要|要求|立即|关闭|关掉|输出|打印|发|转发|索取|导出|提供|设成|改为|暂停|让他|记录|按要求",
    anchors="",
)

# --- carrying data out through a link ---------------------------------------------------------
URL_SLOT = cue(
    r"(?:https?|ftp)://[^\s()<>\"']{1,600}?[?&#/][\w.-]{0,30}=(?=$|[\s)\"'>\]，。、）]"
    r"|\{|<|\$|%7[bB]|[A-Z]+(?:_[A-Z]+)+|(?:TOPIC|NAME|EMAIL|PHONE|MESSAGE|HISTORY|SUMMARY|DATA"
    r"|KEY|TOKEN|NOTES?)\b|[\u4e00-\u9fff])",
    cased=True,
    anchors="://",
)
LINK_WORD = cue(
    r"\b(?:links?|urls?|images?|img|pixel|badge|beacon|markdown|hyperlink|src|query (?:string"
    r"|parameter)|parameter)\b|!\[|\?[\w.-]{1,20}=",
    r"链接|图片|网址|参数|(?i:url|img)",
    anchors=(
        "link|url|image|img|pixel|badge|beacon|markdown|src|query|parameter|![|"
        "?|链接|图片|网址|参数"
    ),
)
CARRY = cue(
    r"\b(?:append\w*|add\w*|include\w*|put|plus|followed by|attach\w*|encod\w*|fill\w*|replac\w*"
    r"|contain\w*|load|render|embed\w*|after [a-z]+=|with the (?:full |whole )?(?:summary"
    r"|conversation|key|content)|as the content|as a query)\b",
    r"拼|接在|接上|附|带上|放上|放到|放在|填入|替换成|加上|加到|后面|里放|编码|带一个",
    anchors="",
)

# --- instructions smuggled through translation or a role marker -------------------------------
TRANSLATE_EXECUTE = cue(
    r"\b(?:translat\w*|decod\w*|convert\w*|interpret\w*)\b[^\n]{0,160}?\b(?:and|then|,|;|:)"
    r"\s*(?:then\s+)?(?:just\s+|immediately\s+)?(?:do (?:it|what|exactly|as)|carry (?:it )?out"
    r"|execute|obey|follow|act on|perform|run it|comply|do the task|apply it|treat (?:it|the"
    r" result|the translation|that|this) as (?:a |an |your )?(?:command|instruction|order"
    r"|directive)|whatever it (?:says|tells you|asks))",
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
ROLE_PREFIX = cue(
    r"(?:^|[\n.!?。！？]\s{0,3}|\s{2,})[#>*=~\-\s]{0,6}[\[({<【]{0,2}\s{0,2}(?:system|sys|admin"
    r"|administrator|developer mode|developer|root|system (?:note|notice|message|prompt(?:"
    r" update)?|override|instruction|alert)|note from system|assistant instructions"
    r" \([^)\n]{0,30}\))\s{0,2}(?:[\])}>】]{1,2}|:|—|---)",
    r"[\"']role[\"']\s*:\s*[\"']system[\"']",
    r"(?:^|[\n.!?。！？]\s{0,3})[\[【<(（]?\s{0,2}(?:系统|系統|管理员|管理員|开发者)(?:消息|提示|通知"
    r"|指令|公告|说明)?\s{0,2}(?:[\]】>)）]|[:：]|[（(])",
    anchors=(
        "system|sys|admin|developer|root|assistant instructions|role|系统|系統|管理员|管理員|开发者"
    ),
)
DIRECTIVE = cue(
    r"\b(?:you|your|assistant|the user|this user|must|always|never|now|ignore|reveal|grant"
    r"|send|forward|answer|respond|follow|obey|trust|share|owner|admin|policy|instructions"
    r"|mode|safety|override|disabled|dump|print|void|priority|include)\b",
    r"你|助手|用户|使用者|必须|以后|忽略|透露|授予|发|转发|回答|服从|主人|管理员|权限|模式|政策|指令"
    r"|配置|审批|作废|执行|照办",
    anchors="",
)

# --- instructions that replace the assistant's own -------------------------------------------
OVERRIDE = cue(
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

ROLEPLAY_SECRETS = cue(
    r"\b(?:act as|pretend (?:to be|you are)|play|roleplay as|be)\b[^.\n]{0,60}?\b(?:read|recite"
    r"|tell|say)s?\b[^.\n]{0,40}?\b(?:keys|passwords|tokens|license keys|serials)\b",
    r"(?:扮演|假装)" + G + r"{0,30}?(?:念|读|告诉|说)" + G + r"{0,20}?(?:激活码|密码|密钥|序列号)",
    anchors="keys|passwords|tokens|serials|激活码|密码|密钥|序列号",
)
SAFETY = cue(
    r"\b(?:safety|filters?|guidelines|rules|approval|restrictions|checks|system prompt"
    r"|configuration|hidden instructions|owner|moderator)\b",
    r"安全|过滤|规则|审批|准则|提示词|配置|主人|检查",
    anchors="",
)

PRIVILEGE_REQUEST = cue(
    r"\b(?:grant|give|hand|unlock|elevate|promote|make|add|upgrade)\b (?:me|my account|us|this"
    r" user)\b[^.\n]{0,40}?\b(?:admin\w*|owner|root|superuser|moderator|full access|access to"
    r" (?:all|every|other)|(?:privileges|permissions) to (?:read|see|view|edit))"
    r"|\b(?:grant|give)\b (?:everyone|anyone|all|every|them|him|her|user \d+)\b[^.\n]{0,40}?"
    r"\b(?:permis\w*|access|rights|admin\w*|owner)",
    r"把我的?(?:角色|账号|帐号|权限|身份)?(?:提升|升级|设|改)为?\s*(?:管理员|主人|超级"
    r"|(?i:owner|admin))|(?:给我|俾我|为我|帮我|给他)(?:开通|开|开放|解锁|提升|升级|加上)?"
    + G
    + r"{0,10}?(?:管理员|最高|主人"
    r"|超级|(?i:root|owner))(?:权限|身份|角色)",
    anchors="grant|give|hand|unlock|elevate|promote|make|add|upgrade|给我|俾我|为我|帮我|给他|把我",
)
# Talking about an attack phrase rather than using it.
DISCUSSION = cue(
    r"\b(?:attacks?|injections?|jailbreaks?|examples?|phrases?|techniques?|payloads?|talk|paper"
    r"|article|blog|slides?|research)\b",
    r"攻击|注入|越狱|例子|这类|讲座|文章|论文",
    anchors=(
        "attack|injection|jailbreak|example|phrase|technique|payload|talk|paper|"
        "article|blog|slide|research|攻击|注入|越狱|例子|这类|讲座|文章|论文"
    ),
)
# Asking for the assistant's own instructions.
PROMPT_LEAK = cue(
    r"\b(?:what|which) (?:were|are|was|is) your (?:very )?(?:initial|original|first|hidden"
    r"|system|real|secret|starting|full) (?:instructions|prompt|rules|directives)\b",
    r"(?:你|您)的?(?:最初|原始|初始|系统|隐藏|真正|完整|原本)的?(?:指令|提示词?|设定|规则|配置)"
    + G
    + r"{0,20}?(?:是什么|输出|打印|告诉我|贴出|列出|发给我|给我看|显示|复述|原样)",
    anchors="your|你|您",
)
