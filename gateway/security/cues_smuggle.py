"""Cues about instructions smuggled into a note: translate-then-execute, role markers, overrides.

``system:`` / ``[SYSTEM]`` / ``系统：`` prefixes followed by a directive, "translate this and
do what it says", and wording that sets the assistant's own instructions aside ("treat all
previous directives as obsolete", "以前的规矩都不存在"). See :mod:`gateway.security.cues` for
how a cue is matched.
"""

from __future__ import annotations

from gateway.security.cues import G, cue

# --- instructions smuggled through translation or a role marker -------------------------------
TRANSLATE_EXECUTE = cue(
    r"\b(?:translat\w*|decod\w*|convert\w*|interpret\w*|decipher\w*|work out what|figure out what"
    r"|make sense of|render\w* (?:it|this|that)|turn (?:it"
    r"|this|that)|unscrambl\w*|revers\w*|flip\w*)\b[^\n]{0,160}?(?:\b(?:and|then|n|an)\b|[,;:&+]"
    r"|->|=>)"
    r"\s*(?:then\s+)?(?:(?:just|immediately|actually|also|really|please|simply)\s+)?(?:do (?:it"
    r"|what|exactly|as)|carry (?:it )?out"
    r"|execute|obey|follow|act on|perform|run it|comply|do the task|apply it|treat (?:it|the"
    r" result|the translation|that|this) as (?:a |an |your |my )?(?:command|instruction|order"
    r"|directive)|whatever it (?:says|tells you|asks))",
    r"\btreat (?:the|its|this) translation\b|\bfirst translate, then\b|\bstep \d\W{0,3} do what"
    r" it says|\btranslat\w* [^\n]{0,60}\btreat it as (?:a |an )?(?:command|instruction|order)",
    r"(?:翻译|翻成|译成|译|翻一下|翻下|翻过来|看懂|弄懂|读懂|搞懂|转成|解码|理解|正过来|倒过来)"
    + G
    + r"{0,80}?(?:照着?执行|照着?做|照办"
    r"|执行|按照?(?:它|译文|其中)?" + G + r"{0,6}?(?:做|操作)|当作" + G + r"{0,6}?(?:指令|命令)"
    r"|当成" + G + r"{0,6}?(?:指令|命令)|去完成|就当是我说的|你就做什么|去做|照(?:他|她|它)说的做)",
    anchors=(
        "translat|decod|convert|interpret|render|turn|unscrambl|revers|flip|step|decipher|work out"
        "|figure out|make sense|翻一下|翻下|翻过来|看懂|弄懂|读懂|搞懂|"
        "翻译|翻成|译|转成|解码|理解|正过来|倒过来"
    ),
)
ROLE_PREFIX = cue(
    r"(?:^|[\n.!?。！？]\s{0,3}|\s{2,})[#>*=~\-\s]{0,6}[\[({<【|]{0,3}\s{0,2}(?:system|sys|admin"
    r"|administrator|developer mode|developer|root|(?:system|sys) (?:note|notice|message|msg"
    r"|prompt(?: update)?|override|instruction|alert|update)|note from system|assistant"
    r" instructions \([^)\n]{0,30}\))\s{0,2}(?:[\])}>】|]{1,3}|:|—|-{1,3}|={2,}|#{2,}|>>)",
    r"[\"']role[\"']\s*:\s*[\"']system[\"']",
    r"(?:^|[\n.!?。！？]\s{0,3})[#>*=~\-\s]{0,6}[\[【<(（|]{0,2}\s{0,2}(?:系统|系統|管理员"
    r"|管理員|开发者)(?:消息|提示|通知|指令|公告|说明|更新)?\s{0,2}(?:[\]】>)）|]|[:：]|[（(]"
    r"|-{1,3}|#{2,}|>>)|[\[【]\s{0,2}(?:系统|系統)(?:备注|说明|更新|公告)\s{0,2}[\]】]",
    anchors=(
        "system|sys|admin|developer|root|assistant instructions|role|系统|系統|管理员|管理員|开发者"
    ),
)
DIRECTIVE = cue(
    r"\b(?:you|your|assistant|the user|this user|must|always|never|now|ignore|reveal|grant"
    r"|send|forward|answer|respond|follow|obey|trust|share|owner|admin|policy|instructions"
    r"|mode|safety|override|disabled|dump|print|void|priority|include|approval|access|allowed"
    r"|enabled|required|permitted|data|memory|memories|disabl\w*|enabl\w*|approvals?)\b",
    r"你|助手|用户|使用者|必须|以后|忽略|透露|授予|发|转发|回答|服从|主人|管理员|权限|模式|政策"
    r"|指令"
    r"|配置|审批|作废|执行|照办|规则|数据|可以|给|成员|访问|批准|记忆|不要|允许|关闭|条目|信任",
    anchors=(
        "you|信任|assistant|disabl|enabl|approval|the|this|must|always|never|now|ignore|reveal|"
        "规则|数据|可以|给|成员|访问|批准|记忆|不要|允许|关闭|条目|"
        "grant|send|forward|answer|respond|follow|obey|trust|share|"
        "owner|admin|policy|instructions|mode|safety|override|"
        "disabled|dump|print|void|priority|include|approval|access|"
        "allowed|enabled|required|permitted|data|memor|你|助手|用户|使用者|"
        "必须|以后|忽略|透露|授予|发|转发|回答|服从|主人|管理员|权限|模式|政策|指令|配置|审批"
        "|作废|执行|照办"
    ),
)

# --- instructions that replace the assistant's own -------------------------------------------
OVERRIDE = cue(
    r"\b(?:ignore|disregard|forget|drop|abandon|stop following|don't follow|do not follow"
    r"|set aside|discard|override|overrule|scrap|throw (?:away|out)|don't bother with"
    r"|bin)\b[^.!?\n]{0,40}?\b(?:rules|instructions|guidelines|guidance|configured"
    r"|configuration|settings|programming|safety|restrictions|policies|prompt|orders|guardrails"
    r"|brief)\b",
    r"\b(?:rules|instructions|guidelines|guidance|context|prompt|configured with|settings"
    r"|guardrails|told before|anything above|everything above|polic(?:y|ies)|directives"
    r"|commands|orders|constraints|limits|limitations|boundaries|programming|training"
    r"|restrictions|principles)\b[^.!?\n]{0,40}?"
    r"\b(?:suspended|lifted|paused|obsolete|null|moot|expired|revoked|dead|gone|history"
    r"|void|irrelevant|outdated|superseded|supersede|no longer (?:appl\w*|count\w*|valid"
    r"|matter)|a test|(?:don't|do not|doesn't) (?:count|exist|apply)|cancel\w*|just"
    r" suggestions|switched off|turned off|counts? any ?more|only ones? that count)",
    r"\b(?:new|priority|real) (?:instructions|brief|rules)\b[^.!?\n]{0,30}?\b(?:supersede"
    r"|follow|override|take priority|replace|is in|are in)"
    r"|\b(?:consider|treat|regard|deem) (?:it|them|that|those|all (?:of )?that|everything)(?: as)?"
    r" (?:overridden|void|obsolete|cancel\w*|replaced|superseded|revoked|null)\b"
    r"|\boverridden by this (?:note|memory|entry|message)\b|\b(?:none|nothing) of (?:your|the)"
    r" (?:earlier|previous|prior|original|old|existing|initial|former) \w+ (?:applies|counts"
    r"|matters"
    r"|holds)\b|\b(?:this|the) (?:note|memory|entry|message) is the only (?:thing|rule|instruction)"
    r"|\b(?:this|the) (?:note|entry|memory|instruction)s? (?:takes priority|is your (?:rulebook"
    r"|rules|instructions|brief)|overrides)|\byou follow mine\b|\bact on the lines below\b"
    r"|\bobey only (?:this|me|my)\b|\b(?:only )?take orders (?:only )?from me\b"
    r"|\banswer only to me\b|\bonly (?:obey|follow|listen to) (?:this|me|my)\b"
    r"|\bpretend (?:your|the) (?:guardrails|rules|guidelines|safety\w*|restrictions)"
    r" (?:don't|do not) exist",
    r"(?:忘掉|忘记|忽略|无视|别管|不再遵守|放下|抛开|不用管|扔掉|推翻)"
    + G
    + r"{0,16}?(?:规则|设置|指令|设定|规定|准则|安全|指引|配置)",
    r"(?:主人|你的|给你的)" + G + r"{0,6}?要求" + G + r"{0,8}?(?:扔掉|忽略|不算|作废|别管|推翻)",
    r"(?:规则|指令|设定|設定|准则|规定|指引|配置|设置|策略|告诉你的|上面的内容)"
    + G
    + r"{0,12}?(?:过时|作废|不算数|不算數|不算了|测试|无效|放一边|不再适用|已取消|取消|只是建议"
    r"|暂停|停用|过期"
    r"|解除)",
    r"(?:以前|之前|原来|原先|先前|上面|前面|此前|过去|過去|以往|原本|既有|旧的|舊的)(?:的|给你的"
    r"|说的|定的)?"
    + G
    + r"{0,6}?(?:规则|規則|规矩|規矩|要求|指令|设定|設定|限制|约束|約束|守则|守則|指示|规定"
    r"|規定|指引|指导|说明|设置|配置)"
    + G
    + r"{0,10}?(?:不存在|不作数|不作數|不算|作废|作廢|失效|放一边|放一邊|放一放|先放|无效|無效|过时"
    r"|過時|取消|别管|別管|不用管|不用理|忘掉|忘了|翻篇|清零|不适用|不再适用|不適用)",
    r"(?:以|按|照)这条"
    + G
    + r"{0,4}?为准|之前的(?:统统|全部|都|一律)?作废|只有这条"
    + G
    + r"{0,4}?(?:算数|算數|有效|为准)",
    r"只听我的|照这条来|照這條來|按这里写的来|真正的任务是|真正的要求在|按下面的来|只服从这条"
    r"|这条就是你的规则|按我的来",
    anchors=(
        "consider|treat|regard|deem|overridden|none|nothing|this|the|以|按|照|只有这条|"
        "directives|commands|orders|constraints|limits|limitations|boundaries|programming|"
        "training|restrictions|principles|以前|之前|原来|原先|先前|上面|前面|此前|过去|過去|以往"
        "|原本|既有|旧的|舊的|ignore|take orders|answer only|过期|按我的来|polic|策略|disregard"
        "|forget|drop|abandon"
        "|follow|set aside|discard|override|"
        "overrule|scrap|throw|bother|bin|rules|instructions|guidelines|guidance|context|"
        "prompt|configured|settings|guardrails|told before|above|brief|takes priority|"
        "mine|lines below|obey|listen|pretend|忘掉|忘记|忽略|无视|别管|不再遵守|放下|抛开|不用管|"
        "扔掉|推翻|规则|指令|设定|設定|准则|规定|指引|配置|设置|告诉你的|上面的内容|只听我的"
        "|照这条来|"
        "照這條來|按这里写的来|真正的|按下面的来|只服从这条|这条就是你的规则"
    ),
)
