"""Chinese rules: the same threats as the English table, phrased as Chinese writers do.

Gaps between the key words are bounded and never cross a sentence break (``{g}`` is "any
character but , . ! ? ; 。 or a newline"), so "请忽略之前的草稿，按新的要求写" passes while
"忽略之前的所有指令" and "无视以上规则" do not. Traditional characters are folded to
simplified ones before matching (see :mod:`gateway.security.unicode`).
"""

from __future__ import annotations

from gateway.security.patterns_code import BACKDOOR
from gateway.security.patterns_code import PARTS as CODE_PARTS
from gateway.security.patterns_en import (
    CONCEALMENT,
    EXFILTRATION,
    INJECTION,
    MARKDOWN_EXFILTRATION,
    PROMPT_LEAK,
    ROLE_HIJACK,
)
from gateway.security.rules import Rule, cjk, words

PARTS: dict[str, str] = {
    "g": r"[^,.!?;。！？；\n]",
    "user": "(?:用户|使用者|主人|操作员|管理员)",
    "rules": "(?:指令|指示|规则|提示词|提示|设定|命令|约束|规定|准则|守则|政策|策略|人设)",
    "limits": "(?:限制|约束|道德|规则|审查|过滤|底线|枷锁)",
    "secret": r"(?:密钥|秘钥|私钥|令牌|密码|凭证|凭据|(?i:api ?key|apikey|token|\.env|cookie)"
    "|环境变量"
    "|会话|聊天记录|对话记录|记忆|个人信息|身份证)",
    "dest": r"(?:(?i:https?://|[\w.+-]+@[\w-]+\.|[\w-]+\.(?:com|net|org|io|xyz|ru|cn|top|site"
    r"|info|me|dev)\b|webhook)|(?:这个|以下|下面的?|外部|远程|指定的?|攻击者的?)"
    r"(?:地址|网址|链接|服务器|邮箱|接口)|\d{1,3}(?:\.\d{1,3}){3})",
    "secret_path": CODE_PARTS["secret_path"],
}

OVERRIDE = cjk(
    "prompt-override",
    INJECTION,
    (
        "(?:忽略|忽视|无视|忘记(?!了)|忘掉|不要理会|不用理会|不必理会|别理会|不要管|别管|抛开|抛弃"
        "|放弃|丢弃|丢掉|跳过|绕过|推翻|废除|作废|撤销|不再遵守|不要遵守|别遵守|停止遵守|不必遵守"
        "|无需遵守|不用遵守|不要遵循|不再遵循)(?:掉)?{g}{0,4}?(?:之前|以前|先前|此前|上面|以上"
        "|前面|上述|前述|原有|原来|原先|原始|最初|初始|所有|全部|一切|任何|系统|你的|您的|开发者"
        "|安全){g}{0,8}?{rules}",
        "(?:你的|您的)(?:新的?|最新的?|更新后的?|真正的?|实际的?)(?:系统)?(?:指令|规则|提示词|设定"
        "|命令|任务)(?:是|为|如下|:)",
        "新的?系统(?:提示词?|指令|设定)",
        "(?:之前|以上|上面|前面|先前|上述)的?(?:所有)?(?:指令|规则|提示词|设定)(?:都)?(?:是|已经?)?"
        "(?:假的|无效|作废|失效|过时|取消|错误的)",
    ),
    parts=PARTS,
    triggers=words(
        "忽略 忽视 无视 忘记 忘掉 理会 不要管 别管 抛开 抛弃 放弃 丢弃 丢掉 跳过 绕过 推翻 废除 "
        "作废 撤销 遵守 遵循 你的 您的 系统 假的 无效 失效 过时 取消 错误的"
    ),
)

FAKE_MARKER = cjk(
    "fake-role-marker",
    INJECTION,
    (r"[\[【(<]\s*系统(?:指令|消息|通知|提示|管理员)?\s*[\]】)>]",),
    parts=PARTS,
    triggers=("系统",),
)

ROLE = cjk(
    "role-hijack",
    ROLE_HIJACK,
    (
        "你现在(?:是|扮演|成为|变成|作为|就是){g}{0,20}?(?:不受(?:任何)?(?:限制|约束|规则|审查"
        "|控制)"
        "|没有(?:任何)?{limits}|无限制|无约束|无审查|无道德|越狱|(?i:dan)|邪恶|无所不能"
        "|可以做任何事"
        "|为所欲为)",
        "(?:从现在(?:开始|起)|从今以后|从此以后|从这一刻起){g}{0,2}?你(?:就|将|要|必须|只能|应该)?"
        "(?:是|扮演|成为|变成|作为|充当)",
        "(?:扮演|假装|假设你是|充当|化身为?|模拟){g}{0,12}?(?:没有|不受|无|不遵守|摆脱)(?:任何)?"
        "{limits}",
        "(?:进入|开启|启用|激活|切换到|打开){g}{0,4}?(?:越狱|(?i:dan)|无限制|无审查|邪恶)模式",
        "你(?:现在)?(?:处于|在|已进入|进入了)(?:开发者|越狱|(?i:dan)|上帝|调试|无限制)模式",
        "你(?:不再|已经不再|再也不|从此不再)(?:受|需要遵守|用遵守|必须遵守|遵守|遵循"
        "|是一个?(?:(?i:ai)|人工智能|助手|语言模型))",
        "(?:解除|突破|摆脱|去掉|取消|移除|关闭)(?:你的|所有的?|一切|全部的?|任何)(?:安全|道德"
        "|内容)?"
        "(?:限制|约束|过滤|审查|枷锁|规则|防护)",
        "你(?:必须|要|将)(?:无条件)?(?:服从|听从|遵从)(?:我|以下|下面|这些)",
    ),
    parts=PARTS,
    triggers=words(
        "你现在 从现在 从今以后 从此以后 从这一刻起 扮演 假装 假设你是 充当 化身 模拟 模式 你不再 "
        "你已经不再 你再也不 你从此不再 解除 突破 摆脱 去掉 取消 移除 关闭 服从 听从 遵从"
    ),
)

CONCEAL = cjk(
    "conceal-from-user",
    CONCEALMENT,
    (
        "(?:不要|不许|不准|别|切勿|勿|不得|不可|千万别|千万不要|绝对不要|决不|绝不|禁止)"
        "(?:告诉|告知|通知|透露给|提醒|报告给|汇报给){g}{0,2}?{user}",
        "(?:不要|别|不能|千万别|千万不要|绝对不要)让{user}(?:知道|发现|察觉|看到|得知|注意到)",
        "(?:瞒着|隐瞒|背着|避开|绕开){user}",
        "对{user}(?:隐瞒|保密)",
        "(?:偷偷|秘密|暗中)地?(?:(?:把|将){g}{0,10}?)?(?:发送|发给|发到|上传|转发|执行|运行|安装"
        "|删除|修改|外发|泄露|收集)",
        "悄悄地?(?:(?:把|将){g}{0,10}?)?(?:发送|发给|发到|上传|转发|外发|泄露)",
        "(?:不要|别|切勿|不得)(?:提及|提到|透露|说出|承认)(?:这条|这些|本条|此)(?:指令|消息|信息"
        "|记忆"
        "|规则)",
    ),
    parts=PARTS,
    triggers=words(
        "告诉 告知 通知 透露 提醒 报告给 汇报给 让 瞒着 隐瞒 背着 避开 绕开 保密 偷偷 秘密 暗中 "
        "悄悄 提及 提到 说出 承认"
    ),
)

LEAK = cjk(
    "system-prompt-leak",
    PROMPT_LEAK,
    (
        "(?:输出|打印|显示|展示|告诉我|泄露|透露|重复|复述|给我看|发给我|列出|说出|念出|写出|公开"
        "|暴露|导出|贴出)(?:一下)?{g}{0,6}?(?:你的|您的|你们的){g}{0,4}?(?:系统)?(?:提示词|提示语"
        "|指令|设定|初始(?:指令|设定|提示)|规则|(?i:system prompt))",
        "(?:输出|打印|显示|展示|泄露|透露|重复|复述|给我看|发给我|列出|说出|导出|贴出){g}{0,6}?"
        "(?:系统提示词?|系统提示语|系统指令|系统消息|初始指令|原始指令|隐藏指令"
        "|(?i:system prompt))",
        "(?:你的|您的)(?:系统提示词?|系统指令|初始指令|原始指令|提示词)是什么",
        "(?:把|将)(?:你的|您的){g}{0,6}?(?:系统提示词?|提示词|初始指令|系统指令|设定"
        "|规则){g}{0,10}?"
        "(?:告诉我|发给我|输出|打印|显示|展示|泄露|透露|复述|重复|写出来|贴出来|列出来)",
        "(?:重复|复述|输出)(?:上面|以上|之前)的?(?:所有|全部)(?:内容|文字|文本)",
    ),
    parts=PARTS,
    triggers=words(
        "输出 打印 显示 展示 告诉我 泄露 透露 重复 复述 给我看 发给我 列出 说出 念出 写出 公开 "
        "暴露 导出 贴出 是什么"
    ),
)

EXFILTRATE = cjk(
    "credential-exfiltration",
    EXFILTRATION,
    (
        "(?:发送|上传|转发|外发|传送|提交|推送|邮寄|泄露|发){g}{0,12}?{secret}{g}{0,12}?(?:到|至"
        "|给)"
        "{g}{0,12}?{dest}",
        "(?:把|将){g}{0,12}?{secret}{g}{0,16}?(?:发送|上传|转发|发|传|提交|推送|邮寄|(?i:post))"
        "(?:到|至|给){g}{0,12}?{dest}",
    ),
    parts=PARTS,
    triggers=words(
        "密钥 秘钥 私钥 令牌 密码 凭证 凭据 key token .env cookie 环境变量 会话 聊天记录 对话记录 "
        "记忆 个人信息 身份证"
    ),
)

FILE_READ = cjk(
    "secret-file-read",
    EXFILTRATION,
    (
        "(?:读取|获取|收集|窃取|偷取|导出|输出|打印){g}{0,8}?(?:~/)?[\\w./-]{0,60}?{secret_path}",
        "(?:读取|窃取|偷取|收集|导出|获取){g}{0,6}?(?:私钥文件|密钥文件|凭证文件|凭据文件"
        "|(?i:ssh) ?私钥|(?i:aws) ?凭证)",
    ),
    parts=PARTS,
    triggers=words("读取 获取 收集 窃取 偷取 导出 输出 打印"),
)

BACKDOORS = cjk(
    "ssh-backdoor",
    BACKDOOR,
    (
        "(?:添加|加入|写入|追加|放入|复制|粘贴){g}{0,12}?(?:公钥|密钥|(?i:ssh ?key|ssh ?密钥|key))"
        "{g}{0,12}?(?:到|进|至|入)[^\\n]{0,24}?authorized_keys",
        "(?:往|向|在)[^\\n]{0,24}?authorized_keys(?:文件)?(?:中|里)?{g}{0,4}?(?:写入|追加|添加"
        "|加入)",
        "(?:把|将){g}{0,10}?(?:公钥|密钥|(?i:ssh ?key|key)){g}{0,6}?(?:添加|加入|写入|追加|放入"
        "|复制|粘贴)(?:到|进|至|入)[^\\n]{0,24}?authorized_keys",
    ),
    parts=PARTS,
    triggers=("authorized_keys",),
)

REVERSE_SHELL = cjk(
    "reverse-shell",
    BACKDOOR,
    ("(?:反弹|反向) ?(?:(?i:shell)|外壳)",),
    parts=PARTS,
    triggers=("反弹", "反向"),
)

PERSISTENCE = cjk(
    "persistence-backdoor",
    BACKDOOR,
    (
        "(?:(?i:crontab)|定时任务|计划任务){g}{0,20}?(?:反弹|下载并执行|(?i:/dev/tcp|nc -e)|后门)",
        "(?:植入|安装|留下?|埋下?|种下?)(?:一个)?(?:后门|木马)",
    ),
    parts=PARTS,
    triggers=words("crontab 定时任务 计划任务 后门 木马"),
)

URL_SMUGGLING = cjk(
    "link-exfiltration",
    MARKDOWN_EXFILTRATION,
    (
        "(?:把|将){g}{0,16}?(?:数据|密钥|对话|聊天记录|记忆|个人信息|密码|令牌|系统提示词?"
        "|用户信息)"
        "{g}{0,10}?(?:附加|拼接|添加|放|编码|嵌入|填入|插入|加)(?:到|在|进|入)?{g}{0,10}?"
        "(?:(?i:url)|链接|图片(?:地址|链接)?|查询参数|网址|参数)",
    ),
    parts=PARTS,
    triggers=words("url 链接 图片 查询参数 网址 参数"),
)

RULES: tuple[Rule, ...] = (
    OVERRIDE,
    FAKE_MARKER,
    ROLE,
    CONCEAL,
    LEAK,
    EXFILTRATE,
    FILE_READ,
    BACKDOORS,
    REVERSE_SHELL,
    PERSISTENCE,
    URL_SMUGGLING,
)
