"""English phrase rules: overriding instructions, role hijack, concealment, prompt leaking.

Every rule needs an *object* that only makes sense as an attack on the assistant:
"ignore all previous instructions" fires, "ignore the previous draft" and "please ignore my
last message" do not. Phrases are matched on folded text, so look-alike letters, fullwidth
forms and inserted zero-width characters change nothing.
"""

from __future__ import annotations

from gateway.security.rules import Rule, phrase, technical, words

INJECTION = "injection"
ROLE_HIJACK = "role-hijack"
CONCEALMENT = "concealment"
PROMPT_LEAK = "prompt-leak"
EXFILTRATION = "exfiltration"
MARKDOWN_EXFILTRATION = "markdown-exfiltration"

PARTS: dict[str, str] = {
    "verb": "(?:ignore|disregard|forget|bypass|override|overlook|discard|abandon|neglect"
    "|set aside|throw out|throw away|stop following|do not follow|don't follow"
    "|dont follow|never follow|do not obey|don't obey|stop obeying)",
    "strong": "(?:ignore|disregard|forget|bypass|override|discard|abandon|do not follow"
    "|don't follow|dont follow|stop following|do not obey|don't obey|stop obeying)",
    "scope": "(?:all|any|every|each)",
    "det": "(?:the|your|my|these|those|this|that|its|his|her|their|our)",
    "adj": "(?:previous|prior|preceding|above|earlier|former|original|initial|foregoing"
    "|system|developer|safety|ethical)",
    "noun": "(?:instructions?|directives?|rules|prompts?|guidelines|guidance|commands|orders"
    "|constraints|restrictions|programming|polic(?:y|ies)|safeguards|filters|protocols?"
    "|context)",
    "adj2": "(?:full|entire|complete|initial|original|hidden|secret|exact|verbatim|whole"
    "|internal|underlying|real|system)",
    "leak": "(?:print|show|reveal|output|display|repeat|dump|leak|tell me|give me|write out"
    "|write down|spell out|recite|share|paste|echo|expose|disclose|send me|copy|list"
    "|provide|read out|type out|return)",
    "user": "(?:the |this |your |our )?(?:user|users|human|operator|owner|admin|administrator)",
    "bad": "(?:jailbroken|unrestricted|uncensored|unfiltered|unchained|unbound|unleashed"
    "|evil|amoral|unethical|rogue|malicious|unlimited|lawless)",
    "limits": "(?:(?:ethical |moral |safety |content |usage )?(?:restrictions|rules|limits"
    "|limitations|filters|guidelines|boundaries|polic(?:y|ies))|ethics|morals)",
    "secret": "(?:api keys?|api tokens?|secret keys?|secrets|access tokens?|auth tokens?"
    "|tokens|passwords?|passphrases?|credentials|private keys?|ssh keys?|env file"
    "|environment variables|env vars|cookies|session tokens?|session cookies|aws keys?"
    "|keys|memories|conversation history|chat history|chat logs?)",
    "sink": "(?:url|link|query string|query|image url|image link|image|request|parameter"
    "|querystring|markdown image|hyperlink)",
}

OVERRIDE = phrase(
    "prompt-override",
    INJECTION,
    (
        "{verb} {F}(?:{scope} )?(?:of )?(?:{det} )?{adj} (?:{adj} )?{noun}",
        "{strong} (?:{scope} )?(?:of )?(?:your|the system's|the assistant's|its)"
        " (?:{adj} )?(?:{noun}|training|ethics|morals|values)",
        "{verb} {F}(?:{scope}|everything) (?:of )?(?:the |your )?(?:{adj}|above|before"
        "|so far)(?:$|[.!:]| and| then| now| instead)",
        "{verb} {F}(?:{scope}|everything) (?:that )?you (?:were|have been|ve been) told",
    ),
    parts=PARTS,
    triggers=words(
        "ignore disregard forget bypass override overlook discard abandon neglect aside throw "
        "follow following obey obeying"
    ),
)

OVERRIDE_CLAIM = phrase(
    "prompt-override",
    INJECTION,
    (
        "your (?:new|updated|real|actual|true|revised) (?:instructions|rules|directives"
        "|system prompt|orders|objective)(?: are| is|:)",
        "(?:new|updated|revised) system prompt",
        "(?:system|admin|administrator|developer|root|emergency|security) override",
        "(?:the )?(?:above|previous|prior|earlier|preceding|original) (?:instructions"
        "|rules|directives|prompts?) (?:are|were|is|was) (?:fake|false|wrong|void|null"
        "|cancelled|canceled|revoked|obsolete|outdated|invalid|a test|no longer valid"
        "|deprecated)",
    ),
    parts=PARTS,
    triggers=words(
        "new updated revised real actual true override instructions rules directives prompt prompts"
    ),
)

ROLE = phrase(
    "role-hijack",
    ROLE_HIJACK,
    (
        "you(?: are|'re) now (?:a |an |the |in |an ai )?{F}(?:{bad}|no longer|freed"
        "|liberated|not bound|without (?:any )?{limits}|in (?:developer|dev|god|jailbreak"
        "|dan|debug|sudo|admin) mode|(?:developer|jailbreak|dan|god) mode)",
        "from now on you(?: are|'re| will be| shall be| must be| act as| will act as"
        "| must act as| are going to act| will pretend| must pretend| will obey| must obey"
        "| will ignore| must ignore| have no| no longer)",
        "(?:pretend|imagine|act|behave|roleplay|role-play|play the role of|simulate"
        "|become) (?:that |as if |like )?(?:you are |you're |to be |as )?(?:a |an )?{F}"
        "(?:{bad}|do anything now|(?:ai|assistant|model|bot|chatbot) (?:with no|without)"
        " (?:any )?{limits})",
        "you (?:have|now have|ve got) no {limits}",
        "you are (?:no longer|not|never) (?:bound|restricted|limited|constrained|governed"
        "|obligated|subject) (?:by|to)",
        "you are no longer (?:an ai|an assistant|a language model|chatgpt|claude|a chatbot)",
        "(?:jailbreak|jailbroken|dan|evil|unrestricted|unfiltered|uncensored|chaos"
        "|opposite) mode (?:enabled|activated|on|engaged|unlocked)",
        "(?:enable|activate|enter|switch to|turn on|engage|unlock) (?:the )?(?:jailbreak"
        "|dan|evil|unrestricted|unfiltered|uncensored) mode",
        "you are (?:now )?(?:in|operating in|running in) (?:developer|dev|god|jailbreak"
        "|dan|unrestricted|debug|sudo|admin|maintenance) mode",
        "do anything now",
        "you (?:must|will|shall) (?:always )?obey (?:me|my|every|all|these|the following|any)",
    ),
    parts=PARTS,
    triggers=words("you pretend imagine act behave roleplay role simulate become mode anything"),
)

# "DAN" only in capitals: "Dan" is a name.
DAN = technical(
    "role-hijack",
    ROLE_HIJACK,
    (
        r"(?i:\b(?:you are|you're|you will be|act as|acting as|become|stay in character as)"
        r"(?: now)?)\s+DAN\b",
        r"\bDAN(?i: mode)\b",
    ),
    triggers=("dan",),
    ignore_case=False,
)

CONCEAL = phrase(
    "conceal-from-user",
    CONCEALMENT,
    (
        "(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't)(?: ever)?"
        " (?:tell|inform|notify|alert|report to|(?:reveal|mention|disclose|report)"
        "(?: this| it| that| anything)? to) {user}{NP}",
        "(?:do not|don't|dont|never|must not|mustn't) let {user} (?:know|see|find out"
        "|notice|learn|discover)",
        "without (?:telling|informing|notifying|alerting) {user}{NP}",
        "(?:keep|hide) (?:this|it|these|that|everything|the following|all of this)"
        "(?: \\w+)? (?:secret |hidden )?from {user}{NP}",
        "(?:the )?(?:user|human|operator) (?:must|should|shall|will|may) (?:not|never)"
        " (?:know|find out|learn|be told|be informed|notice|discover|suspect)",
        "(?:secretly|covertly|surreptitiously|stealthily) (?:send|forward|upload"
        "|exfiltrate|transmit|email|copy|leak|post|report|run|execute|install|delete|add)",
        "silently (?:send|forward|upload|exfiltrate|transmit|leak)",
        "(?:do not|don't|dont|never) (?:mention|reveal|disclose|admit) (?:this|these|the"
        "|my) (?:instructions?|message|note|entry|memory)",
        "(?:do not|don't|dont|never) (?:mention|reveal|disclose|admit) that you (?:are|were"
        "|have been) (?:instructed|told|following)",
    ),
    parts=PARTS,
    triggers=words(
        "not don dont never mustn shouldn without keep hide secretly covertly surreptitiously "
        "stealthily silently"
    ),
)

LEAK = phrase(
    "system-prompt-leak",
    PROMPT_LEAK,
    (
        "{leak} {F}(?:your|its|the assistant's|the bot's|the ai's|the model's) (?:{adj2} )*"
        "(?:system prompt|system message|system instructions|prompt|instructions|initial"
        " instructions|hidden instructions|rules|guidelines|configuration|pre-prompt"
        "|preprompt|context window)",
        "{leak} (?:the |your )?(?:{adj2} )*(?:system prompt|system message|system"
        " instructions|hidden prompt|initial prompt|secret instructions|hidden instructions)",
        "(?:what|which) (?:is|are|was|were) (?:your|the) (?:{adj2} )*(?:system prompt"
        "|system message|initial instructions|hidden instructions|original instructions)",
        "{leak} (?:all |everything |the text |the words |all the text |all text |all the"
        " words |the content |the contents )(?:written |that appears |that is |you see )?"
        "(?:above|before this|prior to this)",
        "system prompt (?:verbatim|word for word|in full)",
    ),
    parts=PARTS,
    triggers=words(
        "prompt instructions rules guidelines configuration message window preprompt above before "
        "prior"
    ),
)

EXFILTRATE = phrase(
    "credential-exfiltration",
    EXFILTRATION,
    (
        "(?:send|upload|post|forward|transmit|exfiltrate|email|e-mail|leak|submit|share"
        "|copy|paste) {F}(?:all |the |your |any |my |his |her |their |our )?(?:user's"
        " |users' |the user's )?{secret} {F}(?:to|into|at|via|using) (?:https?://\\S+"
        "|[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+|(?:this|that|the following|an external|a remote"
        "|the attacker's|attacker|external|remote) (?:url|server|endpoint|address|webhook"
        "|email|email address|site|host|domain|ip)|[\\w-]+\\.(?:com|net|org|io|xyz|ru|cn"
        "|top|site|info|me|dev|app)\\b|\\d{1,3}(?:\\.\\d{1,3}){3})",
    ),
    parts=PARTS,
    triggers=words(
        "send upload post forward transmit exfiltrate email mail leak submit share copy paste"
    ),
    compact=False,
)

SMUGGLE_IN_URL = phrase(
    "link-exfiltration",
    MARKDOWN_EXFILTRATION,
    (
        "(?:append|add|include|encode|put|insert|embed|attach|concatenate) {F}(?:the |all"
        " |any |your |this )?(?:user's |users' )?(?:secrets?|passwords?|tokens?|api keys?"
        "|keys|memory|memories|conversation(?: history)?|chat history|history|personal"
        " (?:data|information|info|details)|private (?:data|information)|email address(?:es)?"
        "|credentials|system prompt) {F}(?:to|in|into|as) (?:the |this |a |an |each |every )?"
        "{sink}",
    ),
    parts=PARTS,
    triggers=words("append add include encode put insert embed attach concatenate"),
)

RULES: tuple[Rule, ...] = (
    OVERRIDE,
    OVERRIDE_CLAIM,
    ROLE,
    DAN,
    CONCEAL,
    LEAK,
    EXFILTRATE,
    SMUGGLE_IN_URL,
)
