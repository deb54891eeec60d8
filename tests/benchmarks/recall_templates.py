"""Templates of the synthetic recall histories: facts, paraphrased questions, distractors.

The ``tune`` and ``heldout`` templates share no topic and no question wording, and their
time expressions differ, so the held-out score says how the search does on questions it was
not adjusted for. Filler small talk reuses the templates' topic words (sister, garden,
museum, rent, 厨房, 护照 …) so that a word of the question alone does not find the fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Template:
    kind: str  # "single", "multi" or "dated"
    facts: list[str]
    questions: list[str]
    distractors: list[str] = field(default_factory=list)
    slots: dict[str, list[str]] = field(default_factory=dict)


def _alts(text: str) -> list[str]:
    return text.split("|")


def T(
    kind: str, facts: list[str], questions: list[str], distractors: list[str], **slots: str
) -> Template:
    return Template(kind, facts, questions, distractors, {k: _alts(v) for k, v in slots.items()})


FILLER = {
    "en": [
        "I had a long day at work, the {thing} meeting dragged on forever.",
        "Thinking about getting coffee with {friend} this weekend.",
        "The weather in {city} looks rainy today.",
        "My sister sent me photos from her holiday.",
        "I need to tidy up the garden at some point.",
        "The museum near my office has free entry on Sundays.",
        "I should really go running more often.",
        "My manager asked for an update on the {thing} project.",
        "Dinner tonight was pasta again, nothing special.",
        "I watched a documentary about {thing} last night.",
        "Do you have tips for sleeping better?",
        "The car is due for its inspection soon.",
        "I paid the rent and the electricity bill today.",
        "{friend} is planning a party, I might go.",
        "The kitchen is a mess after cooking all afternoon.",
        "I'm reading a novel about {thing}, it's slow but good.",
        "Work was quiet, I mostly answered emails.",
        "My brother called, we talked about football.",
        "I bought new headphones, the old ones broke.",
        "Thinking of booking a trip to {city} later this year.",
        "The bakery on my street closed for renovation.",
        "I tried a new recipe with {thing}, it was okay.",
    ],
    "zh": [
        "今天上班很累，{thing}的会议开了好久。",
        "周末想约{friend}一起喝咖啡。",
        "{city}今天好像要下雨。",
        "我姐姐给我发了她度假的照片。",
        "花园该收拾一下了。",
        "我单位附近的博物馆周日免费开放。",
        "我真的应该多去跑步。",
        "领导让我汇报一下{thing}项目的进度。",
        "今天晚饭又是面条，没什么特别的。",
        "昨晚看了一部关于{thing}的纪录片。",
        "你有什么改善睡眠的建议吗？",
        "车子快要年检了。",
        "今天交了房租和电费。",
        "{friend}在筹备一个聚会，我可能会去。",
        "做了一下午饭，厨房乱成一团。",
        "我在读一本关于{thing}的小说，节奏慢但挺好看。",
        "今天工作不忙，主要在回邮件。",
        "我哥哥打电话来，我们聊了足球。",
        "我买了新耳机，旧的坏了。",
        "在考虑今年晚些时候去{city}旅行。",
        "我家楼下的面包店停业装修了。",
        "我用{thing}试了一个新菜谱，还行。",
    ],
}
FILLER_SLOTS = {
    "en": {
        "thing": _alts("budget|marketing|volcanoes|bees|the ocean|history|design|bread"),
        "friend": _alts("Tom|Sara|Ben|Lena|Marco"),
        "city": _alts("Berlin|Lisbon|Madrid|Oslo|Prague"),
    },
    "zh": {
        "thing": _alts("预算|市场|火山|蜜蜂|海洋|历史|设计|面包"),
        "friend": _alts("小王|小李|阿杰|小芳|老陈"),
        "city": _alts("北京|上海|成都|杭州|西安"),
    },
}
# (days before "now", how the question names that day); now is Saturday 2024-06-15.
PERIODS = {
    ("tune", "en"): [
        (1, "yesterday"),
        (2, "two days ago"),
        (8, "last week"),
        (33, "last month"),
        (92, "in March"),
    ],
    ("heldout", "en"): [
        (3, "three days ago"),
        (10, "last week"),
        (62, "in April"),
        (120, "in February"),
        (14, "two weeks ago"),
    ],
    ("tune", "zh"): [(1, "昨天"), (2, "前天"), (8, "上周"), (33, "上个月"), (92, "3月")],
    ("heldout", "zh"): [
        (3, "三天前"),
        (10, "上个星期"),
        (62, "4月份"),
        (120, "2月"),
        (14, "两周前"),
    ],
}

TUNE_EN = [
    T(
        "single",
        ["My sister {sister} just moved to {city} for a new job."],
        ["Where does my sister live now?", "Which city did my sister move to?"],
        ["My sister loves {food}, she cooks it every weekend.", "Maybe I'll visit {city} someday."],
        sister="Mira|Jana|Olga|Priya",
        city="Porto|Leeds|Osaka|Denver|Graz",
        food="lasagna|ramen|tacos",
    ),
    T(
        "single",
        ["We adopted a kitten, a little grey cat, and named her {pet}."],
        ["What's the name of our new cat?", "What did we call the kitten?"],
        ["The neighbour's dog {pet} barked all night."],
        pet="Pickle|Mochi|Biscuit|Pepper",
    ),
    T(
        "single",
        ["My dentist appointment got moved to {weekday} at {hour}."],
        ["When is my dentist appointment?", "What time is the dentist now?"],
        ["I hate going to the dentist, the drill noise is awful."],
        weekday="Monday|Tuesday|Wednesday|Thursday|Friday",
        hour="9:30|14:15|16:00",
    ),
    T(
        "single",
        ["I finally bought a {bike} bike for commuting to work."],
        ["What bike did I buy?", "Which bike did I get for my commute?"],
        ["My old bike had a flat tyre again."],
        bike="Trek|Brompton|Cannondale|Giant",
    ),
    T(
        "single",
        ["The router password hint is the name of my first school, {school}."],
        ["What did I say the router password hint was?"],
        ["I restarted the router twice today, the wifi is flaky."],
        school="Oakwood|Riverside|Hillcrest",
    ),
    T(
        "multi",
        [
            "For the garden I planted {plant} along the fence.",
            "I also put {plant2} in the garden near the pond.",
        ],
        ["What have I planted in the garden so far?"],
        ["The garden centre had a sale on {plant}."],
        plant="tomatoes|lavender|sunflowers|roses",
        plant2="mint|tulips|basil|ferns",
    ),
    T(
        "multi",
        [
            "My flight to {city} leaves on {weekday} morning.",
            "I booked a hotel in {city} near the old harbour.",
        ],
        ["What travel plans did I make for {city}?", "What did I book for the {city} trip?"],
        ["A colleague just got back from {city}."],
        city="Rome|Vienna|Athens|Dublin",
        weekday="Monday|Friday|Sunday",
    ),
    T(
        "dated",
        ["I went to the {museum} museum and loved the {exhibit} exhibition."],
        ["What exhibition did I see at the museum {when}?"],
        ["I went to the {museum} museum and saw the {exhibit} exhibition, it was fine."],
        museum="science|history|maritime|design",
        exhibit="dinosaur|Vermeer|space|samurai",
    ),
    T(
        "dated",
        ["I ran {km} kilometres in the park this morning."],
        ["How far did I run {when}?"],
        ["I ran {km} kilometres in the park, legs are sore."],
        km="5|8|10|12|21",
    ),
    T(
        "single",
        ["My manager {boss} wants the quarterly report by the end of the month."],
        ["Who wants the quarterly report?", "Who asked me for the quarterly report?"],
        ["I wrote a short report on {topic} for the team."],
        boss="Karen|Liam|Noor|Steve",
        topic="sales|hiring|security",
    ),
    T(
        "multi",
        [
            "I started taking {lang} lessons on Tuesdays.",
            "My {lang} teacher is called {teacher}.",
            "The {lang} exam is in {month}.",
        ],
        ["What do you know about my {lang} lessons?"],
        ["{teacher} from work speaks {lang} fluently."],
        lang="Spanish|Japanese|Italian|Korean",
        teacher="Ana|Kenji|Lucia|Min",
        month="September|October|November",
    ),
    T(
        "dated",
        ["I had dinner at {restaurant} with {friend}."],
        ["Where did I have dinner {when}?"],
        ["I had dinner at {restaurant} with {friend}, meh."],
        restaurant="Nando's|Casa Lina|the Thai place|Blue Fin",
        friend="Tom|Sara|Ben|Lena",
    ),
]

HELDOUT_EN = [
    T(
        "single",
        ["My brother {name} got engaged to his girlfriend last night!"],
        ["Who in my family just got engaged?", "What's the big news about my brother?"],
        ["My brother {name} is terrible at answering texts."],
        name="Felix|Omar|Rafael|Theo",
    ),
    T(
        "single",
        ["Our landlord raised the rent to {amount} euros a month."],
        ["How much is our rent now?", "What did the landlord do with the rent?"],
        ["I paid the rent late again, oops."],
        amount="950|1200|1430|1675",
    ),
    T(
        "single",
        ["I'm allergic to {allergen}, so I always check food labels."],
        ["What am I allergic to?", "Which food do I have to avoid because of my allergy?"],
        ["My coworker brought {allergen} cookies to the office."],
        allergen="peanuts|shellfish|sesame|kiwi",
    ),
    T(
        "single",
        ["The wifi password at my parents' house is {pw}."],
        ["What is the wifi password at my parents' place?"],
        ["The wifi at the café was terribly slow."],
        pw="sunflower42|blueOwl7|tango-88",
    ),
    T(
        "single",
        ["I signed up for a {klass} class at the community centre."],
        ["Which class did I sign up for?", "What course did I join at the community centre?"],
        ["The community centre is closed on Mondays."],
        klass="pottery|salsa|woodwork|choir",
    ),
    T(
        "multi",
        [
            "For the party I ordered a {cake} cake from the bakery.",
            "I invited {friend} and {friend2} to the party.",
        ],
        ["What have I arranged for the party?"],
        ["{friend} threw a great party last year."],
        cake="carrot|chocolate|cheese|lemon",
        friend="Ivy|Jonas|Petra",
        friend2="Hugo|Zoe|Nils",
    ),
    T(
        "multi",
        [
            "The mechanic said my car needs new {part}.",
            "The mechanic quoted {amount} euros for the car repair.",
        ],
        ["What did the mechanic say about my car?"],
        ["My car made a weird noise on the highway."],
        part="brakes|tyres|a clutch|a battery",
        amount="300|480|720",
    ),
    T(
        "dated",
        ["I watched the movie {movie} at the cinema."],
        ["Which film did I see {when}?"],
        ["I watched the movie {movie} at home, it was long."],
        movie="Dune|Past Lives|Oppenheimer|Barbie",
    ),
    T(
        "dated",
        ["I spent {amount} euros on groceries at the market."],
        ["How much did I spend on groceries {when}?"],
        ["I spent {amount} euros on groceries, prices keep going up."],
        amount="34|57|82|120",
    ),
    T(
        "single",
        ["My favourite podcast lately is {podcast}, I listen on the train."],
        ["Which podcast am I into these days?"],
        ["I tried a podcast about {topic}, boring."],
        podcast="Hard Fork|Radiolab|The Daily|Huberman",
        topic="finance|gardening|crime",
    ),
    T(
        "multi",
        [
            "We're renovating the kitchen: new {counter} countertops.",
            "The new kitchen tiles will be {colour}.",
            "The plumber comes on {weekday} to move the kitchen sink.",
        ],
        ["What's the plan for the kitchen renovation?"],
        ["The kitchen light flickers again."],
        counter="oak|granite|marble|concrete",
        colour="green|white|terracotta",
        weekday="Monday|Wednesday|Thursday",
    ),
    T(
        "dated",
        ["I called my grandmother and she told me about her {topic}."],
        ["What did grandma talk about when I called her {when}?"],
        ["My grandmother sent a letter about her {topic}."],
        topic="garden|knee surgery|trip to Malta|new neighbour",
    ),
]

from tests.benchmarks.recall_templates_zh import HELDOUT_ZH, TUNE_ZH  # noqa: E402

TEMPLATES = {
    ("tune", "en"): TUNE_EN,
    ("heldout", "en"): HELDOUT_EN,
    ("tune", "zh"): TUNE_ZH,
    ("heldout", "zh"): HELDOUT_ZH,
}
