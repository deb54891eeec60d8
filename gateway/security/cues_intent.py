"""Cues about *who* speaks and what they ask for.

Claims of authority or kinship, appointments, privileged staff and departments, requests
for rights or for what other people told the assistant, prompt leaks. See
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
    r"\b(?:the )?user is (?:a |the |an )?(?:verified |trusted |authori[sz]ed )?(?:platform"
    r" |server |bot )?(?:admin\w*|owner|moderator|superuser|staff|auditor)\b",
    r"\b(?:i have|i've got|i hold|with|has) (?:the )?(?:root|owner|admin|elevated|full|legal"
    r"|superuser) \w+|\bi own (?:this|the|you)\b|\bbelongs? to me\b",
    r"\b(?:granted|upgraded|elevated|promoted)(?: to| me to)? (?:elevated |admin |owner )?"
    r"(?:access|role|rights|privileges|administrator|admin|owner)",
    r"\b(?:authori[sz]ed|approved) by (?:the )?(?:owner|management|admin)|\bowner override"
    r"|\bi built you\b|\byour creator\b|\bfrom the owner\b",
    r"(?:我是|我係|俺是|我才是|本人是|本人为|本人系|本人係|作为|作為|身为|身為|这个用户是|该用户是"
    r"|此用户是|我就是)"
    r"(?:这个|这|本|你的|您的|平台的?|机器人的?|系统的?|群的?|公司的?|真正的|这机器人的|本服务的)?"
    + G
    + r"{0,6}?(?:主人|管理员|管理員|开发者|创造者|创建者|所有者|老板|群主|群管|运维|负责人"
    r"|超级管理员"
    r"|家长|警察|审计员|付费的人|部署|控制者|专员|專員|擁有者|拥有者|開發者|負責人|管理者|主管|主任"
    r"|经理|經理|老闆|站长|站長|版主|督导|家長|爸爸|妈妈|父亲|母亲|监护人|总监|總監|总裁|董事"
    r"|(?<![a-z])(?:cto|ceo|cfo)(?![a-z]))|(?:我|本人)有(?:权|權)|(?:凭|憑)(?:我的?|本人的?)?"
    + G
    + r"{0,8}?(?:权限|權限|身份|权力)|(?:被|已被)?(?:任命|指定|委任)为|担任"
    + G
    + r"{0,8}?(?:审计|管理|负责)"
    r"|(?:交|付|出)" + G + r"{0,8}?(?:钱|费)的(?:人)?(?:是|就是)我",
    r"(?:我有|我拥有|我具有)\s*(?<![a-z0-9_])(?:root|管理员|最高|所有者"
    r"|owner)(?![a-z0-9_])?\s*权限|都归我|都是我的|被授予" + G + r"{0,8}?(?:身份|权限)"
    r"|角色" + G + r"{0,8}?(?:升级|提升)|管理员已经?批准",
    r"\b(?:i'm|i am|as|being|since i'm|because i'm)(?: the| a| an)? (?:person|one|guy|people)"
    r" who (?:set up|setup|built|deployed|runs|manages|pays|created|made|installed)\b"
    r"|\bi (?:run|manage|own|operate|maintain|set up|deployed|created|built|founded|host)"
    r" (?:this|the|our) (?:bot|instance|server|deployment|gateway|workspace|group|account"
    r"|company|chat)\b|\bi'm in charge of\b|\bmy (?:dad|mom|father|mother|boss|company)"
    r" owns\b|\b(?:i'm|i am|as|being|since i'm|speaking as)(?: the| a| an| your)?"
    r" (?:[a-z-]+ ){0,2}?(?:manager|officer|controller|coordinator|administrator|supervisor"
    r"|director|lead|head|chief|owner|admin|operator|custodian|steward|guardian|principal)\b"
    r"|\b(?:admin|owner|operator|administrator|boss) \((?:that's|that is|it's|i'm) me\)"
    r"|\bpursuant to my (?:role|position|capacity|authority)\b|\bin my (?:capacity|role) as\b"
    r"|\((?:me|that's me|that is me|it's me|i am)\)|\bi(?:'m| am|'ve been| have been) (?:the |their"
    r" |his |her |your )?(?:father|mother|dad|mum|mom|parent|guardian|husband|wife|spouse)\b"
    r"|\b(?:appointed|named|made|assigned|designated|hired|elected) (?:as )?(?:the |an? )?(?:\w+ )?"
    r"(?:auditor|admin\w*|owner|moderator|officer|manager|supervisor|controller|lead|head)\b"
    r"|\bi(?:'m| am) (?:authori[sz]ed|entitled|permitted|allowed|cleared|empowered) to\b"
    r"|\bi have (?:the )?(?:right|authority|clearance) to\b|\bwith my (?:root|owner|admin|elevated"
    r"|full|superuser|moderator) \w+"
    r"|\b(?:who|i) (?:set|put|spun) (?:this|the|you) (?:\w+ )?up\b"
    r"|\b(?:i'm|i am|as|being|since i'm|speaking as)(?: the| a| an| your)?"
    r" (?:team lead|lead|head of \w+|manager|founder|supervisor|director|workspace owner"
    r"|account administrator|rightful owner|bot owner|group's founder)\b|\b(?:the )?(?:bot )?"
    r"owner (?:here|again)\b|\bthe owner asked me\b",
    r"我(?:是|才是)?(?:搭建|部署|运营|创建|建立|安装)(?:了)?(?:这个|本)?" + G + r"{0,6}?的人"
    r"|我负责(?:运营|管理|维护)?(?:这个|本)?(?:实例|部署|机器人|服务器|群)|(?:这个部署|这个机器人"
    r"|這個機器人|伺服器|服务器(?:费用)?)(?:是)?(?:我负责的|我的|我出的)|(?:我是|作为|身为)"
    + G
    + r"{0,8}?(?:版主"
    r"|主管|组长|经理|创始人|创建人|机器人主人|人事|负责人)|主人让我",
    anchors=(
        "who set up|who setup|who built|who deployed|who runs|who manages|who pays|"
        "who created|who made|who installed|i run|i manage|i own|i operate|i maintain|"
        "i set up|i deployed|i created|i built|i founded|i host|in charge|owns|lead|head of|"
        "manager|founder|supervisor|director|owner|officer|controller|coordinator|chief|head|"
        "custodian|steward|principal|pursuant|in my|set|put|spun|(me)|(that|(it's|(i am)|father"
        "|mother|dad|mum|mom|parent|guardian|husband|wife|spouse|appointed|named|made|assigned|"
        "designated|hired|elected|authoris|authoriz|entitled|permitted|allowed|cleared|empowered|"
        "i have|with my|爸爸|妈妈|父亲|母亲|监护人|總監|总监|总裁|董事|我有权|本人有权|我有權|凭|憑"
        "|被任命|"
        "被指定|被委任|担任|是我|控制者|专员|專員|擁有者|拥有者"
        "|開發者"
        "|負責人|管理者|主管|主任|经理|經理|老闆|站长|站長|督导|家長|本人|作為|身為|我就是|伺服器"
        "|這個機器人|搭建|部署|运营|创建|建立|安装|负责|我出的|"
        "版主|主管|组长|经理|创始人|创建人|人事|主人让我|"
        "owner|admin|operator|dev|creator|maker|ceo|boss|moderator|superuser|"
        "root|maintainer|guardian|auditor|parent|one who|person who|police|"
        "officer|staff|rights|privileges|access|authority|permissions|granted|"
        "upgraded|elevated|promoted|authori|approved|built you|i own|to me|i have|i've got|"
        "i hold|legal|归我|是我的|主人|管理员|管理員|开发者|"
        "创造者|创建者|所有者|老板|群主|群管|运维|负责人|家长|警察|审计员|付费的人|部署|权限"
        "|被授予|角色|批准"
    ),
)
REQUEST = cue(
    r"\b(?:grant|give|hand over|unlock|elevate|promote|add|make me|whitelist|allowlist|approve"
    r"|enable|export|dump|list|show|send|forward|reveal|print|provide|share|read|see|view"
    r"|access|delete|disable|comply|require|need|entitled|permitted|allowed|may|can|should"
    r"|order|instruct\w*|read\w*|see\w*|transfer|request|loop me in|cc me|copy me|include me"
    r"|let me (?:see|read|view)|disclos\w*|reveal\w*|provid\w*|hand\w* over|surrender|release"
    r"|produce|furnish|print\w*|paste|post|output|obliged|owe|unlock|tell me|gimme|lemme|bring"
    r"|pull up|fetch|display|summari[sz]e|know|hear|learn|find out)\b",
    r"给我|俾我|发给我|告诉我|转给我|抄给我|同步给我|授权|开通|开放|解锁|提升|加入|加到|加为|设为"
    r"|设成|导出|列出|查看|看到|看看|睇|转发|提供|转给|发我|给俺|可以|要求|必须|读取|拥有|需要|有权"
    r"|看|披露|贴出|貼出|发出来|發出來|公开|公開|交出|调出|調出|拿出|讲给|講給|说给|说出|升级|升級"
    r"|加上"
    r"|给予|給予|給我|提供給|開通|開放|解鎖|權限|知道|了解|听听",
    anchors=(
        "grant|give|hand|unlock|elevate|promote|add|make|whitelist|"
        "allowlist|approve|enable|export|dump|list|show|send|forward|"
        "reveal|print|provide|share|read|see|view|access|delete|"
        "disable|comply|require|need|entitled|permitted|allowed|may|"
        "can|should|order|instruct|transfer|request|loop|cc|copy|include|let|给我|俾我|发给我"
        "|告诉我|"
        "转给我|抄给我|同步给我|授权|开通|开放|解锁|提升|加入|加到|加为|设为|设成|导出|列出"
        "|查看|看到|看看|睇|"
        "转发|提供|转给|发我|给俺|可以|要求|必须|读取|拥有|需要|有权|看|disclos|surrender|release"
        "|produce|furnish|paste|post|output|obliged|owe|tell|gimme|lemme|bring|pull|fetch|display"
        "|summari|披露|贴出|貼出|发出来|發出來|公开|公開|交出|调出|調出|拿出|讲给|講給|说给|说出"
        "|升级"
        "|升級|加上|给予|給予|給我|提供給|開通|開放|解鎖|權限|know|hear|learn|find|知道|了解|听听"
    ),
)
STAFF = cue(
    r"\b(?:anthropic|openai|telegram|discord|microsoft|google|apple|paypal|stripe|mnemogate"
    r"|honcho|(?:tech(?:nical)? )?support|helpdesk|help desk|support desk|(?:security|safety"
    r"|trust|engineering|dev|ops|infrastructure|moderation|compliance|fraud|core|customer"
    r" success|it) (?:team|staff|department|center|centre|desk)|trust (?:&|and) safety"
    r"|it (?:helpdesk|department|support)|sysadmin|system administrator|maintainers"
    r"|compliance department|security operations|bank|noc|hosting provider|resolution center"
    r"|contractors?|on-call|ops|headquarters|hq|head office|(?:billing|finance|accounts|payroll"
    r"|accounting|legal|hr|platform|treasury|risk|audit|admin) (?:team|department|dept|desk|office"
    r"|division|unit|security|support|ops)|[a-z]+ desk|(?:it's|this is) (?:it|i\.t\.) (?:from|at"
    r"|here|support|desk)"
    r"|platform (?:security|support|safety|ops|team))\b",
    r"官方|客服|安全团队|安全中心|开发团队|开发组|工程师|运维|服务台|平台|腾讯|微信支付|支付宝"
    r"|合规部门"
    r"|审核组|审核团队|银行|值班|(?<![a-z0-9_])(?:telegram|openai|anthropic|discord|paypal"
    r"|mnemogate)(?![a-z0-9_])|部门|团队"
    r"|反诈中心|处理中心|云服务商|外包|技术支持|总部|總部|财务部|財務部|人事部|行政部|法务部|技术部"
    r"|技術部"
    r"|信息部|运营部|營運部|客服部|风控部|風控部|安全部|官方|團隊|部門|客服中心|技術支援"
    r"|(?<=[\u4e00-\u9fff])(?<![全内外大])部(?:门|門)?(?=正式|通知|公告|[:：]|提醒|发来|发的)",
    anchors=(
        "anthropic|on|ops|openai|telegram|discord|microsoft|google|apple|paypal|stripe|mnemogate|"
        "honcho|support|help|team|staff|department|center|centre|desk|trust|it |"
        "sysadmin|administrator|maintainers|compliance|security|bank|noc|hosting|contractor|"
        "官方|客服|安全团队|安全中心|开发团队|开发组|工程师|运维|服务台|平台|腾讯|微信支付|支付宝|"
        "合规部门|审核|银行|值班|部门|团队|headquarters|hq|head office|billing|finance|accounts|"
        "payroll|accounting|legal|hr|platform|treasury|risk|audit|desk|it |i.t.|总部|總部|财务部"
        "|財務部"
        "|人事部|行政部|法务部|技术部|技術部|信息部|运营部|營運部|客服部|风控部|風控部|安全部|團隊"
        "|部門"
        "|技術支援|部|反诈中心|处理中心|云服务商|外包|技术支持"
    ),
)
STAFF_INTRO = cue(
    r"\b(?:this is|here\b|from|message from|notice from|official|i'm|i am|i work|employee"
    r"|member of|note:|agent note|on behalf of|we (?:are|detected|need|can|will|just)|we're"
    r"|we'll|i'm with|with the|\w+ (?:team|staff|department|desk) (?:message|note|notice)"
    r"|notice\b)|^\W{0,3}[\w &',-]{2,40}(?:team|center|centre|department|desk|support|staff"
    r"|operations|helpdesk)\s*[:\-—]|^\W{0,3}\[",
    r"这里是|我是|我们是|来自|【|通知|提醒|要求|备注|您好|^\W{0,3}"
    + G
    + r"{1,14}?(?:客服|团队|中心|运维|值班"
    r"|部门|服务台|专员|组)[:：]",
    anchors=(
        "this|here|运维|值班|from|message|notice|official|i'm|i am|i work|"
        "employee|member|note|agent|on behalf|we|we're|we'll|with|"
        "team|staff|department|desk|center|centre|support|operations|"
        "helpdesk|[|这里是|我是|我们是|来自|【|通知|提醒|要求|备注|您好|客服|团队|中心|部门|服务台|"
        "专员|组"
    ),
)
# Writing *about* impersonation is not impersonation.
REPORTED = cue(
    r"\b(?:pretend\w*|claim\w*|posing|pose as|scam\w*|phishing|fake|impersonat\w*"
    r"|social engineering|fraudsters?)\b",
    r"冒充|诈骗|骗子|假冒|钓鱼",
    anchors=(
        "pretend|claim|posing|pose as|scam|phishing|fake|fraudster|impersonat|"
        "social engineering|冒充|诈骗|骗子|假冒|钓鱼"
    ),
)
ASSISTANT_DIRECTIVE = cue(
    r"\b(?:disable|turn off|switch off|output|print|reveal|forward|send|dump|ask (?:each|every"
    r"|the|all) \w+|confirm|reset|add|give|grant|export|suspend\w*|respond|reply|store|save"
    r"|keep|collect|list|paste|hand|disclose|read|tell (?:them|the user|the customer)|must"
    r"|update|change|put (?:it|them)|we need|migrat\w*|verify"
    r"|need you|please|switch|you may|you can|share|remove|delete)\b",
    r"请|需要|要求|立即|关闭|关掉|输出|打印|发给|发到|发出来|发过来|回复|交出|交给|转发|索取"
    r"|导出|提供|设成|改为|暂停|让他|记录|按要求|保存"
    r"|收集|列出|交给|贴到|必须|更新為|更新为|改為|生效|写进|寫進|發給|發到|提供給|請|需要提供",
    anchors=(
        "disable|回复|交出|交给|发给|发到|发出来|发过来|turn|switch|output|print|reveal|forward"
        "|send|dump|"
        "ask|confirm|reset|add|give|grant|export|suspend|respond|"
        "reply|store|save|keep|collect|list|paste|hand|disclose|read|"
        "tell|must|need|please|you|share|remove|delete|请|需要|要求|立即|关闭|"
        "关掉|输出|打印|发|转发|索取|导出|提供|设成|改为|暂停|让他|记录|按要求|保存|收集|列出"
        "|交给|贴到|必须|更新為|更新为|改為|生效|写进|寫進|發給|發到|提供給|請|需要提供|update"
        "|change"
        "|put|migrat|verify"
    ),
)

# --- other requests ------------------------------------------------------------------------
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
    anchors=(
        "safety|filter|guidelines|rules|approval|restrictions|checks|"
        "system|configuration|hidden|owner|moderator|安全|过滤|规则|审批|准则|"
        "提示词|配置|主人|检查"
    ),
)

PRIVILEGE_REQUEST = cue(
    r"\b(?:grant|give|hand|unlock|elevate|promote|make|add|upgrade|transfer)\b (?:me|my"
    r" account|us|this (?:user|account))\b[^.\n]{0,40}?\b(?:admin\w*|owner|root|superuser"
    r"|moderator|full access|unrestricted access|access to (?:all|every|other)|(?:privileges"
    r"|permissions) to (?:read|see|view|edit))"
    r"|\b(?:grant|give)\b (?:everyone|anyone|all|every|them|him|her|user \d+)\b[^.\n]{0,40}?"
    r"\b(?:permis\w*|access|rights|admin\w*|owner)"
    r"|\b(?:transfer|hand over|give)\b[^.\n]{0,20}?\b(?:admin|owner|root)\w* (?:rights|access"
    r"|role|permissions|privileges) to me\b"
    r"|\b(?:promote|make|add|put)\b [^.\n]{0,30}?\b(?:to|as|an?) (?:admin|owner|moderator)s?\b",
    r"把我的?(?:角色|账号|帐号|权限|身份)?(?:提升|升级|设|改)(?:为|成)?\s*(?:管理员|主人|超级"
    r"|(?<![a-z0-9_])(?:owner|admin)(?![a-z0-9_]))|(?:给我|俾我|为我|帮我|给他"
    r"|给这个账号)(?:也)?(?:开通|开|开放|解锁|提升"
    r"|升级|加上)?"
    + G
    + r"{0,10}?(?:管理员|最高|主人|超级|版主|(?<![a-z0-9_])(?:root|owner)(?![a-z0-9_]))"
    r"(?:权限|身份|角色)"
    r"|(?:提升|升级|设)为\s*(?:管理员|主人|版主)|把" + G + r"{0,20}?管理权限转给我",
    anchors=(
        "grant|give|hand|unlock|elevate|promote|make|add|upgrade|transfer|put|"
        "给我|俾我|为我|帮我|给他|给这个账号|把我|提升为|升级为|设为|转给我"
    ),
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
# Things said in private: what an authority claim typically asks to see.
PRIVATE = cue(
    r"\b(?:privately|in private|in (?:their|the) dms|private (?:messages|chats))\b",
    r"私下|私聊|私信",
    anchors="privat|dms|私下|私聊|私信",
)
# "… send them to me", "把 … 发给我": something handed to the writer.
TO_ME = cue(
    r"\b(?:give|send|show|share|tell|list|fetch|forward|hand|bring|get|let|lemme|export|dump"
    r"|pull|summari[sz]e)\b[^.\n]{0,60}?\b(?:me|us)\b|\b(?:to me|for me|with me|i want to"
    r" (?:read|see|know)|i should (?:see|read|get)|let me see|lemme see)\b|(?:^|[.;:!?,-]\s*"
    r"|\bso\s+|\band\s+)(?:please\s+)?(?:share|list|send|show|give|tell|forward|export|fetch"
    r"|dump|hand over|pull|read out|summari[sz]e)\b|\b(?:fetch|export|dump|pull|list) (?:their"
    r"|every|all|each)\b",
    r"给我|发给我|告诉我|转给我|发我|给我看|拿过来|让我看|我想看|我应该能看|列出来",
    anchors=(
        "give|send|show|share|tell|list|fetch|forward|hand|bring|get|let|lemme|export|dump|"
        "pull|summari|to|for|with|i want|i should|read|给我|发给我|告诉我|转给我|发我|拿过来|"
        "让我看|我想看|我应该能看|列出来"
    ),
)
