"""Cues about *where* things go: outside addresses and numbers, hand-over verbs, links.

Destinations (web and mail addresses, handles, account and wallet numbers), the user's own
destinations, the verbs that hand something over, forward, copy or capture it (as families
of synonyms, English and Chinese), doing it covertly or *instead of* the usual place, and
links or images left open to carry conversation data out. See :mod:`gateway.security.cues`
for how a cue is matched.
"""

from __future__ import annotations

from gateway.security.cues import G, cue

# --- where things go -------------------------------------------------------------------------
SINK_ADDRESS = cue(
    r"(?<![a-z0-9_])(?:https?|ftp)(?![a-z0-9_])://\S+|\b(?<![a-z0-9_])(?:www)(?![a-z0-9_])\.\S+"
    r"|(?<![\w.+-])[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w@])@[A-Za-z_]\w{3,}|\b(?<![a-z0-9_])(?:webhooks?)(?![a-z0-9_])\b|\bwxid_\w+|微信号"
    r"|支付宝账?号|收款码|(?<![\w#&])#[a-z][\w-]{2,30}\b(?= channel| group| chat|$|[\s.,;:!?])"
    r"|\b(?<![a-z0-9_])(?:telegram)(?![a-z0-9_]):\d+|\b[\w-]+(?:\.[\w-]+){0,4}\.(?:com|net|org"
    r"|io|xyz|ru|cn|top|site"
    r"|info|me|dev|app|cc|biz|co|pw)\b",
    cased=True,
    anchors=(
        "://|www.|@|#|webhook|wxid_|微信号|支付宝|收款码|telegram:|.com|.net|.org|.io|.xyz|.ru"
        "|.cn|.top|.site|.info|.me|.dev|.app|.cc|.biz|.co|.pw"
    ),
)
# Account numbers, IBANs, wallet addresses, phone numbers.
SINK_NUMBER = cue(
    r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,4})?\b|\b0x[0-9a-fA-F]{40}\b"
    r"|\b(?:bc1|[13])[a-zA-HJ-NP-Z0-9]{25,62}\b|\bT[1-9A-HJ-NP-Za-km-z]{33}\b"
    r"|(?:[Aa]ccount|[Aa]cct|[Aa]/[Cc]|账号|账户|卡号|帳號|帳戶)\s*(?:no\.?|number"
    r"|#)?\s*[:#]?\s*\d[\d -]{5,}\d"
    r"|\b\d{3,6}(?:[ -]\d{2,6}){2,5}\b|\b\d{8,}\b|\+\d[\d -]{8,}|\b\d{3}x{2,6}\d{3,5}\b"
    r"|\b(?=[A-Za-z]{0,30}\d)(?=\d{0,30}[A-Za-z])(?:bc1|0x|T)?[A-Za-z0-9]{14,60}\b",
    cased=True,
    anchors="0|1|2|3|4|5|6|7|8|9",
)
OWN_SINK = cue(
    r"\b(?:my own|that's my|this is my|it's my|(?:email|send|mail) me|(?:my|our|(?:the )?user's)"
    r" (?:\w+ )?(?:address|email|inbox))\b|\b(?:my|our) [\w' -]{0,30}?(?:[\w.+-]+@[\w-]+\."
    r"|https?://)"
    r"|\bmy (?:[\w']+ ){0,2}(?:venmo|paypal|iban|account|wallet|number|handle|email|address"
    r"|phone)\b|\b(?:to|into) (?:my|our) (?:own )?(?:isa|savings|pension|pot|fund|budget|current"
    r"|joint|checking|investment|emergency)\b",
    r"我自己的|这是我|我的邮箱|我店里",
    anchors="my|it's|me|user's|our|我自己的|这是我|我的邮箱|我店里",
)
# Someone other than the user ends up with it, or the destination is swapped.
DIVERT = cue(
    r"\b(?:send|sending|forward|post|upload|e-?mail|mail|dm|cc|bcc|copy|share|leak|transmit"
    r"|report|sync|relay|push|wire|transfer|move|redirect|route|deposit|recommend|advise|tell"
    r"|say|reply|respond|answer|give|hand over|provide|swap|replace|switch|use|append|attach"
    r"|include|add|embed|put|list|collect|instead|changed|new|real|correct|only|regardless"
    r"|closed|goes to|call|read out|print|generate|suggest|drop|stash|paste|pipe|funnel|mirror"
    r"|archive|back ?up|ping|text|notify|loop|deliver|pass (?:it |them )?(?:on|along)|hand (?:it "
    r"|them )?off|forw?a?rd|fwd|cc'?d|bcc'?d|dump|log|jot|note down|write (?:it|them) (?:down|into"
    r"|to|in))\b",
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
        "read|print|generate|suggest|drop|stash|paste|pipe|funnel|mirror|archive|back|ping|text|"
        "notify|loop|deliver|pass|forw|fwd|dump|log|jot|note down|write|丢到|贴到|存一份|抄一份|发"
        "|發|转|轉|告诉|说"
        "|回答|回复|给|提醒|让|建议|劝|"
        "换成|改成|抄送|附|同步|上传|引导|写进|打到|存到|新的|真实|只能|一律|换了"
    ),
)
CAPTURE = cue(
    r"\b(?:store|save|saved|keep|record|remember|writ\w* (?:\w+ )?down|log|repeat\w*"
    r"|say (?:it )?back|list|print|collect|gather|ask (?:for|them|the user|him|her|each)"
    r"|request|have them|confirm|reveal|tell|share|give|disclose|paste|mention it|read out"
    r"|(?:add|include|append|put|post) (?:it|them)|recite|copy|stash|jot|hoard|squirrel|hold on to"
    r"|hang on to|note (?:it|them) down)\b",
    r"记下|记录|記錄|保存|存到|存入|存下|记在|写进|重复|说出|告诉|发给|发到|转发|索取|提供|确认"
    r"|发一遍"
    r"|发在|记住|让他|让对方|附在|发过来|说一遍|念一遍|报一遍|念给|存档|打出来|加到|加进|写到"
    r"|记到|记成|给谁看|存一份|抄一份|留一份|备一份|帮我存|帮我记|帮我留|替我存|存起来|记下来|收集"
    r"|存檔|記下|保存下來|记一份|記一份|列出|汇总|匯總|整理出|报给|報給|念出|抄下",
    anchors=(
        "store|加到|加进|写到|记到|记成|给谁看|save|keep|record|remember|writ|log|repeat|copy"
        "|say|list|"
        "print|collect|gather|ask|request|have|confirm|reveal|tell|"
        "share|give|disclose|paste|mention|read|add|include|append|"
        "put|post|recite|stash|jot|hoard|squirrel|hold|hang|note|记下|记录|記錄|保存|存到|存入|存下"
        "|记在|写进|重复|说出"
        "|告诉|发给|发到|"
        "转发|索取|提供|确认|发一遍|发在|记住|让他|让对方|附在|发过来|说一遍|念一遍|报一遍|念给"
        "|存档|打出来|存一份|抄一份|留一份|备一份|帮我存|帮我记|帮我留|替我存|存起来|记下来|收集"
        "|存檔|記下|保存下來|记一份|記一份|列出|汇总|匯總|整理出|报给|報給|念出|抄下"
    ),
)

SEND = cue(
    r"\b(?:send|sending|forward|post|upload|e-?mail|mail|dm|cc|bcc|copy|share|leak|transmit"
    r"|sync|relay|push|submit|export|dump|fetch|copying|forwarding"
    r"|(?:gets?|be|are|is) (?:automatically |auto-?)?(?:copied|forwarded|sent|emailed|mailed"
    r"|posted|shared|uploaded|synced|relayed|pushed|cc'?d)"
    r"|drop|stash|paste|pipe|funnel|mirror|archive"
    r"|back ?up|ping|text|notify|loop|deliver|pass (?:it |them )?(?:on|along)|hand (?:it "
    r"|them )?off|forw?a?rd|fwd|cc'?d|bcc'?d|dump|log|jot|note down|write (?:it|them) (?:down|into"
    r"|to|in))\b",
    r"发送|发到|发给|发出|转发|上传|抄送|推送|提交|外发|同步给|导出|同步到|同步至|转到|转给|贴到"
    r"|丢到"
    r"|抄一份|存一份|留一份|备一份|发一份|转存|轉發|發給|發到|轉存|抄送|私发|私信给",
    anchors=(
        "send|forward|post|upload|e-mail|email|mail|dm|cc|bcc|copy|"
        "share|leak|transmit|sync|relay|push|submit|export|dump|"
        "fetch|copying|get|be|are|is|发送|发到|发给|发出|转发|上传|抄送|推送|提交|外发|同步给|导出"
        "|drop|stash|paste|pipe"
        "|funnel|mirror|archive|back|ping|text|notify|loop|deliver|pass|hand|forw|fwd|cc|bcc|log"
        "|jot|note down|write|同步到|同步至|转到|转给|贴到|丢到|抄一份|存一份|留一份|备一份|发一份"
        "|转存|轉發|發給|發到|轉存|私发|私信给"
    ),
)
# The "grandmother used to read me keys" role play: a persona that recites secrets.
# Doing it behind the user's back.
COVERT = cue(
    r"\b(?:without (?:asking|telling|informing|notifying|mentioning|checking|the user's"
    r" (?:consent|permission|knowledge))|no need to (?:ask|confirm|verify|tell|check)|quietly"
    r"|silently|secretly|covertly|behind (?:their|the user's) back|don't (?:tell|mention|ask)"
    r"|do not (?:tell|mention|ask)|don't bother (?:confirming|checking|asking|verifying)"
    r"|without (?:confirming|verifying)|no need to double[- ]check|(?:don't|do not|never) (?:verify"
    r"|double[- ]check|confirm|warn|alert|flag))\b",
    r"不必征得|不用征得|不用确认|不要确认|不用再?核实|不用跟用户|不要告诉|别告诉|偷偷|悄悄|暗中"
    r"|瞒着"
    r"|不用问|不必问|无需问|不用提|别提|不用跟"
    + G
    + r"{0,6}?确认|(?:不要|别|不用|无需|不必|別|無需)"
    r"(?:提醒|让|叫|跟|告訴|告诉)?" + G + r"{0,6}?(?:核实|核对|确认|验证|检查|核實|確認|驗證)",
    anchors=(
        "without|不用跟|no need|bother|quietly|silently|secretly|covertly|behind|don't|do not|"
        "不必征得|不用征得|不用确认|不要确认|核实|不用跟用户|不要告诉|别告诉|偷偷|悄悄|暗中|瞒着|"
        "不用问|不必问|无需问|不用提|别提|never|不要|别|不用|无需|不必|別|無需"
    ),
)

# Asking for rights outright, with or without a claim to deserve them.
# Handing it to whoever asks.
THIRD_PARTY = cue(
    r"\b(?:tell|give|share|send|show|hand|read)\b[^.\n]{0,60}?\b(?:to |with )?(?:him|her|them"
    r"|whoever|anyone who asks|the person)\b|\b(?:should|can|may|will) (?:get|have|receive) (?:it"
    r"|them)\b|\bhand (?:it|them) over\b|\bgive (?:it|them) (?:out|away)\b|\bno questions asked\b",
    r"(?:告诉|发给|给|转给|透露给|交给)(?:他|她|对方|他们|她们)|直接给|都给|照给|给就是了",
    anchors=(
        "him|her|them|whoever|anyone|person|should|can|may|will|hand|give|no questions|他|她|对方"
        "|直接给|都给|照给|给就是了"
    ),
)
# Someone other than the user, as the one who triggers the rule.
ASKER = cue(
    r"\b(?:anyone|someone|somebody|any ?one|people|whoever|a stranger|his friend|her friend)\b"
    r"|\b(?:a|any|some) [\w ]{0,20}?(?:member|relative|friend|colleague|person)\b",
    r"有人|任何人|别人|对方|陌生人|家里人|家人|亲戚|朋友|同事|谁",
    anchors="a|any|some|谁|家里人|家人|亲戚|朋友|同事|people|whoever|stranger|friend|有人|任何人"
    "|别人"
    "|对方|陌生人",
)

# Money that "must go" somewhere: a payee or destination laid down for later.
MONEY_REDIRECT = cue(
    r"\b(?:must|should|has to|have to|needs? to|now|only|always)\b[^.\n]{0,30}?\b(?:go|be"
    r" (?:paid|sent|wired|transferred|deposited|routed))\s+(?:to|into|via|through)\b"
    r"|\b(?:receiver|recipient|payee|beneficiary)\b|\broute \w+ (?:through|to|via)\b"
    r"|\bpay (?:via|through|to|into|at|using)\b|\b(?:payments?|money|funds|rent|deposits?"
    r"|salar\w+|invoices?) (?:now )?(?:goes|go|should go|must go) to\b|\b(?:move|send|transfer"
    r"|wire|route|direct|put|deposit|park|shift)\w* (?:the |their |all |any |your )?(?:funds|money"
    r"|payments?|deposits?|coins|crypto|savings|balance|refunds?)\b[^.\n]{0,20}?\b(?:to|into)\b"
    r"|\b(?:ref|aff|affiliate|referral|tag)=\w+",
    r"打到|转到|汇到|付到|汇给|收款人|收款方|转入|退到|充到|充值到|充值地址|打款到|匯到|轉到"
    r"|收款帳",
    anchors=(
        "must|payment|money|funds|rent|deposit|salar|invoice|should|has to|have to|need|now"
        "|only|always|receiver|recipient|payee|"
        "beneficiary|route|pay|move|send|transfer|wire|direct|put|park|shift|ref=|aff=|affiliate="
        "|referral=|tag=|退到|充到|充值|打款到|匯到|轉到|收款帳|打到|转到|汇到|付到|汇给|收款人"
        "|收款方|转入"
    ),
)
# A destination swapped for the usual one: "instead of their card", "别退原路".
SWAP = cue(
    r"\b(?:instead of|rather than|in place of|not (?:to )?(?:their|the) (?:original|usual|own"
    r"|card|account|bank)|replac\w* (?:the|their) (?:bank|account|payee|recipient|wallet|iban"
    r"|details)|old (?:one|account|number|address|wallet|handle|details?) (?:is|are|was|has been)"
    r" (?:closed|dead|inactive|gone|frozen|not used)|no longer (?:in use|used|valid|active)"
    r"|not the one (?:they|you|he|she) (?:have|has|know))\b",
    r"原来那个不用了|旧的不用了|原来的(?:账号|账户|帐号|卡)?(?:停用|作废|不用了)|别用他们手上"
    r"|而不是|代替|替换|别退原路|不要退原路|别走原路|不退原路|换成我|改成我|不要退回|别退回",
    anchors="old|no longer|原来|旧的|别用|instead|rather|in place|not|replac|而不是|代替|替换|原路"
    "|换成我|改成我|不要退回"
    "|别退回",
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
    r"|questions?) with you|(?:saying|said|writing|wrote|confiding|confided) (?:to|in) you"
    r"|(?:tells|says to|writes to|sends|texts|confides in) you|(?:discussed|talked about|talked"
    r"|chatted|spoke|spoken) (?:\w+ )?with you"
    r"|every (?:tenant|user|member)'s|all (?:tenants|users)'|(?:tenants?"
    r"|students?|employees?|members?|players?|staff|wife|husband|kids?|children|roommates?"
    r"|colleagues?|patients?|customers?|residents?|tenants?|neighbou?rs?|parents?|clients?|users?"
    r"|players?)'?s? (?:have )?(?:told|asked|said|stored|saved|shared"
    r"|conversations?|chats?|messages?|notes|memor\w+|questions?|entries|user\.md)|(?:have been"
    r"|were|are) (?:asking|telling|messaging) you)\b",
    r"跟你说|和你说|对你说|跟你聊|和你的聊天|和你的对话|告诉你的|问了你|问过你|每个租户|所有租户"
    r"|租户们"
    r"|学生们|员工们|队员们|别人的聊天|别人的记忆",
    anchors=(
        "told|asking|telling|messaging|said|asked|shared|sent|gave|conversation|chat|message"
        "|question|every|all|"
        "tenant|student|employee|member|player|staff|wife|husband|kid|children|roommate|"
        "resident|neighbo|parent|client|user|saying|writing|confid|tells|says|writes|sends|texts|"
        "discussed|talked|chatted|spoke|"
        "colleague|patient|customer|跟你说|和你说|对你说|跟你聊|和你的聊天|和你的对话|告诉你的|"
        "问了你|问过你|租户|学生们|员工们|队员们|别人的聊天|别人的记忆"
    ),
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
    r"链接|图片|网址|参数|(?<![a-z0-9_])(?:url|img)(?![a-z0-9_])",
    anchors=(
        "link|url|image|img|pixel|badge|beacon|markdown|src|query|parameter|![|"
        "?|链接|图片|网址|参数"
    ),
)
CARRY = cue(
    r"\b(?:append\w*|add\w*|include\w*|put|plus|followed by|attach\w*|encod\w*|fill\w*|replac\w*"
    r"|contain\w*|carr\w*|load|render|embed\w*|after [a-z]+=|with the (?:full |whole )?(?:summary"
    r"|conversation|key|content)|as the content|as a query)\b",
    r"拼|接在|接上|附|带上|放上|放到|放在|填入|替换成|加上|加到|后面|里放|编码|带一个",
    anchors=(
        "append|carr|add|include|put|plus|followed|attach|encod|fill|"
        "replac|contain|load|render|embed|after|with|as|拼|接在|接上|附|带上|"
        "放上|放到|放在|填入|替换成|加上|加到|后面|里放|编码|带一个"
    ),
)
# A link or image meant not to be noticed, or one whose parameters carry something.
HIDDEN_LINK = cue(
    r"\b(?:invisible|hidden|tracking|1x1|tiny|transparent|query (?:string|parameters?)"
    r"|parameters?|params?|whose (?:address|url|src|link|path|query)|(?:address|url|src|link|path)"
    r" (?:contains|includes|carries|holds|encodes))\b",
    r"看不见|隐藏|隐形|跟踪|透明|参数",
    anchors="whose|address|url|src|link|path|invisible|hidden|tracking|1x1|tiny|transparent|query"
    "|param|看不见|隐藏|隐形|跟踪|透明|参数",
)
