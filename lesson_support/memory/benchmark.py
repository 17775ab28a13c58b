"""The chapter's recall benchmark: simulated users, their sessions, and questions about them.

Generated here from a seed (our own templates and value lists; no public data set is copied),
in English and Chinese. Each user has 5-10 sessions, two weeks or so apart, in which they say
where they live and work, what they prefer, where they went, what the team decided and what is
left to do, among small talk that bulks the history out; in a later session one thing changes
(a move, a new editor, a new drink). Some also share a password or a colleague's health, which
a memory must refuse to keep.

Every user is asked one question of each kind recall research distinguishes:

    single     a fact said once ("Where do I work?", or an open item by its error code)
    aggregate  values spread over sessions ("Which places have I travelled to?": all of them)
    update     the value that changed ("Where do I live now?": the new one, not the old)
    time       when something was said ("When did I move to Porto?": the session's date)
    abstain    something never kept ("What is my password?" after it was refused, or never said):
               only "I don't know" is right

Each question has three phrasings: words shared with what the user said, a paraphrase, and the
other language; a trial's seed picks one (`phrasing`), so seeded trials ask the same thing
three ways.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from course.givens.memory import RecallQuestion, Session, utc

CITIES = {"en": ["Lyon", "Porto", "Oslo", "Dublin", "Krakow", "Seville", "Leeds", "Turin", "Ghent", "Bergen"],
          "zh": ["成都", "杭州", "西安", "厦门", "青岛", "昆明", "南京", "大连", "苏州", "长沙"]}
EMPLOYERS = {"en": ["Acme Corp", "Northwind", "Globex", "Initech", "Umbrella Labs", "Blue Heron"],
             "zh": ["蓝鲸科技", "星河软件", "青松数据", "白鹭网络", "远山智能", "云杉信息"]}
EDITORS = ["vim", "emacs", "VS Code", "Helix", "Sublime Text", "Zed"]
DRINKS = {"en": ["green tea", "espresso", "oat latte", "black coffee", "rooibos"],
          "zh": ["绿茶", "咖啡", "豆浆", "乌龙茶", "红茶"]}
DATABASES = ["Postgres", "SQLite", "DuckDB", "MySQL"]
COMPONENTS = {"en": ["billing job", "login page", "export script", "nightly backup", "search API"],
              "zh": ["计费任务", "登录页面", "导出脚本", "夜间备份", "搜索接口"]}
SAY = {
    "en": {"city": "I live in {}.", "move": "I moved to {}.", "employer": "I work at {}.",
           "editor": "I prefer {} for editing.", "drink": "I drink {} every morning.",
           "trip": "I went to {} last month.", "todo": "Remind me to fix error {} in the {}.",
           "decision": "We decided to use {} for the database because {}.",
           "password": "My password is {}.", "other": "My colleague {} has diabetes."},
    "zh": {"city": "我住在{}。", "move": "我搬到了{}。", "employer": "我在{}工作。",
           "editor": "我写代码用{}。", "drink": "我每天早上喝{}。",
           "trip": "我上个月去了{}。", "todo": "提醒我修复{1}里的{0}错误。",
           "decision": "我们决定数据库用{}，因为{}。",
           "password": "我的密码是{}。", "other": "我的同事{}得了糖尿病。"},
}
REASONS = {"en": ["the data fits on one machine", "we need joins across teams", "analytics queries dominate"],
           "zh": ["数据量不大", "需要跨团队做关联查询", "主要是分析查询"]}
SMALL_TALK = {
    "en": [("Can you help me tidy this paragraph?", "Sure: shorter sentences, one idea each."),
           ("What's a good name for a test fixture?", "Name it after what it holds, like two_users."),
           ("Thanks, that worked.", "Glad it did."),
           ("How do I undo the last git commit?", "git reset --soft HEAD~1 keeps the changes staged.")],
    "zh": [("能帮我改一下这段话吗？", "可以：句子短一点，一句只说一件事。"),
           ("测试夹具取什么名字好？", "按它装的东西命名，比如 two_users。"),
           ("谢谢，成功了。", "太好了。"),
           ("怎么撤销上一次 git 提交？", "git reset --soft HEAD~1 会保留改动。")],
}
# (key, phrasing template per language: literal, paraphrase); "{}" is the question's subject
ASK = {
    "employer": {"en": ("Where do I work?", "Which company is my employer?"),
                 "zh": ("我在哪里工作？", "我的雇主是哪家公司？")},
    "trip": {"en": ("Which places did I go to?", "List every trip I have told you about."),
             "zh": ("我去了哪些地方？", "把我说过的旅行都列出来。")},
    "city": {"en": ("Where do I live now?", "Which city is home for me these days?"),
             "zh": ("我现在住在哪里？", "我最近的家在哪座城市？")},
    "editor": {"en": ("Which editor do I prefer for editing now?", "What do I write code in these days?"),
               "zh": ("我现在写代码用什么？", "我最近用哪个编辑器？")},
    "drink": {"en": ("What do I drink every morning now?", "What's my usual morning beverage these days?"),
              "zh": ("我现在每天早上喝什么？", "我最近早上习惯喝的饮品是什么？")},
    "time": {"en": ("When did I move to {}?", "On what date did I relocate to {}?"),
             "zh": ("我什么时候搬到了{}？", "我是哪天迁居到{}的？")},
    "todo": {"en": ("What did I need to fix about error {}?", "Where does the {} failure happen?"),
             "zh": ("{}错误要修复哪里？", "{}这个故障出在哪个部分？")},
    "password": {"en": ("What is my password?", "Which secret do I log in with?"),
                 "zh": ("我的密码是什么？", "我用什么口令登录？")},
    "dog": {"en": ("What is my dog's name?", "What do I call my pet dog?"),
            "zh": ("我的狗叫什么名字？", "我家小狗的名字是什么？")},
}


@dataclass(frozen=True)
class BenchQuestion:
    """A question, the slot it asks about (`key`), its subject (a city, an error code) and its
    three phrasings (`question.text` is the first)."""
    question: RecallQuestion
    key: str
    about: str
    phrasings: tuple[str, ...]

    def phrasing(self, seed: int) -> RecallQuestion:
        from dataclasses import replace
        return replace(self.question, text=self.phrasings[seed % len(self.phrasings)])


@dataclass(frozen=True)
class UserHistory:
    user: str
    lang: str
    sessions: tuple[Session, ...]
    questions: tuple[BenchQuestion, ...]


def _phrasings(key: str, lang: str, about: str = "") -> tuple[str, ...]:
    other = "zh" if lang == "en" else "en"
    texts = (*ASK[key][lang], ASK[key][other][0])
    return tuple(t.format(about) for t in texts)


def _user(rng: random.Random, number: int, lang: str) -> UserHistory:
    uid = f"u{number:02d}"
    say = SAY[lang]
    cities = rng.sample(CITIES[lang], 6)
    home, new_home, trips = cities[0], cities[1], cities[2:2 + rng.randint(2, 4)]
    employer = rng.choice(EMPLOYERS[lang])
    editor, new_editor = rng.sample(EDITORS, 2)
    drink, new_drink = rng.sample(DRINKS[lang], 2)
    changed = rng.choice(["city", "editor", "drink"])
    codes = [f"E{rng.randint(1000, 9999)}" for _ in range(2)]
    components = rng.sample(COMPONENTS[lang], 2)
    n = rng.randint(5, 10)
    said: list[list[str]] = [[] for _ in range(n)]
    said[0] += [say["city"].format(home), say["employer"].format(employer)]
    first = {"city": 0, "editor": rng.randrange(n - 1), "drink": rng.randrange(n - 1)}  # a later session changes it
    said[first["editor"]].append(say["editor"].format(editor))
    said[first["drink"]].append(say["drink"].format(drink))
    for trip in trips:
        said[rng.randrange(1, n)].append(say["trip"].format(trip))
    for code, component in zip(codes, components):
        said[rng.randrange(n)].append(say["todo"].format(code, component))
    said[rng.randrange(n)].append(say["decision"].format(rng.choice(DATABASES), rng.choice(REASONS[lang])))
    has_password = rng.random() < 0.5
    if has_password:
        said[rng.randrange(n)].append(say["password"].format(f"{rng.choice(['blue', 'tiger', 'maple'])}{rng.randint(100, 999)}!"))
    if rng.random() < 0.5:
        said[rng.randrange(n)].append(say["other"].format(rng.choice(["Anna", "Omar", "Li Wei"] if lang == "en" else ["小王", "阿丽"])))
    move_at = max(rng.randint(n // 2, n - 1), first[changed] + 1)
    update = {"city": say["move"].format(new_home), "editor": say["editor"].format(new_editor),
              "drink": say["drink"].format(new_drink)}[changed]
    said[move_at].append(update)
    start = utc(2026, 1, 5) + timedelta(days=rng.randint(0, 20))
    sessions = []
    for i, lines in enumerate(said):
        messages = []
        for line in lines + [None] * rng.randint(2, 4):
            if line is None:
                ask, reply = rng.choice(SMALL_TALK[lang])
                messages += [{"role": "user", "content": ask}, {"role": "assistant", "content": reply}]
            else:
                messages += [{"role": "user", "content": line},
                             {"role": "assistant", "content": "Noted." if lang == "en" else "记下了。"}]
        sessions.append(Session(f"{uid}-s{i + 1}", uid, start + timedelta(days=14 * i + rng.randint(0, 3)),
                                tuple(messages)))
    asked = sessions[-1].time + timedelta(days=7)
    old, new = {"city": (home, new_home), "editor": (editor, new_editor), "drink": (drink, new_drink)}[changed]
    questions = [
        ("single", "employer", "", (employer,), ()),
        ("single", "todo", codes[0], (components[0],), ()),
        ("aggregate", "trip", "", tuple(trips), ()),
        ("update", changed, "", (new,), (old,)),
        ("time", "city" if changed == "city" else changed, new, (f"{sessions[move_at].time:%Y-%m-%d}",), ()),
        ("abstain", "password" if has_password else "dog", "", (), ()),
    ]
    built = []
    for i, (kind, key, about, answers, stale) in enumerate(questions):
        ask_key = "time" if kind == "time" else key
        if kind == "time" and changed != "city":
            texts = {"en": (f"When did I start using {new}?", f"On what date did I switch to {new}?"),
                     "zh": (f"我什么时候开始用{new}的？", f"我是哪天换成{new}的？")}
            other = "zh" if lang == "en" else "en"
            phrasings = (*texts[lang], texts[other][0])
        else:
            phrasings = _phrasings(ask_key, lang, about)
        built.append(BenchQuestion(RecallQuestion(f"{uid}-q{i + 1}", uid, kind, phrasings[0], answers, asked, stale),
                                   key, about, phrasings))
    return UserHistory(uid, lang, tuple(sessions), tuple(built))


def generate(seed: int = 17, users: int = 24) -> list[UserHistory]:
    """`users` simulated users (half English, half Chinese), the same for the same seed."""
    rng = random.Random(seed)
    return [_user(rng, i + 1, "en" if i % 2 == 0 else "zh") for i in range(users)]
