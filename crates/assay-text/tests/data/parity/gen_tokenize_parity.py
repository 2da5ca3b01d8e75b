"""Writes tokenize_parity.json: sacreBLEU 2.6.0's BLEU with every tokenizer
that needs no external model (`none`, `13a`, `intl`, `zh`, `char`), and its
chrF / chrF++ with `whitespace` and `lowercase`, over hand-written pairs in
Chinese, Japanese, Arabic, Russian, Hindi and English with punctuation,
numbers, symbols and emoji.

Regenerate from the repository root with the bench venv (sacrebleu 2.6.0,
regex 2026.11.15, Python 3.11):

    bench/.venv/bin/python crates/assay-text/tests/data/parity/gen_tokenize_parity.py

The Rust test crates/assay-text/tests/it/tokenize_parity.rs checks every
value in the file: scores to 1e-12, counts, totals and lengths exactly,
tokenized text and signatures as strings. The file holds, besides the pairs:

- `pairs[i].tokens[TOK]`: the tokenizer's output (`BLEU(tokenize=TOK)`'s
  `_preprocess_segment`, so after `rstrip()`) for the prediction and each
  reference;
- `pairs[i].bleu[CONFIG]`: `sentence_bleu(prediction, references,
  tokenize=..., lowercase=...)` (score, counts, totals, precisions, bp,
  sys_len, ref_len);
- `pairs[i].chrf[CONFIG]`: `CHRF(word_order=..., whitespace=...,
  lowercase=...).sentence_score(prediction, references).score`;
- `corpus[GROUP]`: `corpus_bleu` and `CHRF.corpus_score` per language group
  and over all pairs (`all`), references padded with `None` where a pair has
  fewer, as sacreBLEU takes variable reference counts, with signatures;
- `tables`: the code points sacreBLEU's `zh` tokenizer treats as Chinese
  (`TokenizerZh._is_chinese_char` over every code point: its table's two
  five-hex-digit entries are read by Python as two-character strings, which
  this reproduces), the `regex` classes `\\p{P}`, `\\p{S}`, `\\p{N}` of the
  `intl` tokenizer, and every code point whose Python `str.lower()` is not
  itself, with its lowercase.
"""

import json
import pathlib
import sys
import unicodedata

import regex
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "tokenize_parity.json"

TOKENIZERS = ["none", "13a", "intl", "zh", "char"]
# (tokenize, lowercase)
BLEU_CONFIGS = [(t, False) for t in TOKENIZERS] + [("13a", True), ("intl", True), ("zh", True)]
# (word_order, whitespace, lowercase)
CHRF_CONFIGS = [
    (0, False, False),
    (0, True, False),
    (2, False, False),
    (2, True, False),
    (2, False, True),
    (0, True, True),
]


def bleu_key(tok: str, lowercase: bool) -> str:
    return f"{tok}{'-lc' if lowercase else ''}"


def chrf_key(word_order: int, whitespace: bool, lowercase: bool) -> str:
    return f"nw{word_order}{'-ws' if whitespace else ''}{'-lc' if lowercase else ''}"


# (prediction, references); a str reference is a list of one.
PAIRS = {
    "zh": [
        ("猫坐在垫子上。", "猫坐在垫子上。"),
        ("今天天气很好，我们去公园散步吧！", "今天天气不错，我们去公园走走吧！"),
        ("他说：“我明天会来。”", "他说：「我明天会来」。"),
        ("iPhone 15的价格是5,999元。", "iPhone 15 售价 5999 元。"),
        ("北京是中国的首都，人口约2,189万。", "中国的首都是北京，人口大约为2189万人。"),
        ("会议将在２０２４年３月１５日举行。", "会议定于2024年3月15日举行。"),
        ("请访问https://example.com获取更多信息。", "更多信息请访问 https://example.com 。"),
        ("温度为-5.5°C，湿度80%。", "气温零下5.5摄氏度，湿度为80％。"),
        ("这本书（第二版）共有３２０页……", "该书第二版共320页。"),
        ("我喜欢吃苹果、香蕉和橘子。", "我爱吃苹果，香蕉以及橙子。"),
        ("人工智能（AI）正在改变世界——尤其是医疗领域。", "人工智能正在改变世界，特别是在医疗领域。"),
        ("", "这是一个测试。"),
        ("Ｈｅｌｌｏ，ｗｏｒｌｄ！", "Hello, world!"),
        ("价格：￥１，２００．００", "价格：¥1,200.00"),
        ("第①章：引言", "第一章：引言"),
        ("他跑了42.195公里，用时2:05:30。", "他用2小时5分30秒跑完了42.195公里。"),
        ("《红楼梦》是曹雪芹的作品。", "曹雪芹创作了《红楼梦》。"),
        ("第一句话。\n第二句话。", "第一句话。\n第三句话。"),
        ("我们明天见。", ["明天见。", "我们明天再见！"]),
        ("今天好开心😀👍", "今天很开心😊"),
        ("Python３.１１比Python 3.10快约25%。", "Python 3.11 比 3.10 快大约 25%。"),
        ("臺灣的首都是臺北市。", "台湾的首都是台北市。"),
        ("你好\u3000世界", "你好 世界"),
        ("𠀀𠮷野家的牛丼", "吉野家的牛肉饭"),
        ("  前后有空格  ", "前后有空格"),
    ],
    "ja": [
        ("猫がマットの上に座っている。", "猫はマットの上に座っています。"),
        ("東京は日本の首都です。", "日本の首都は東京です。"),
        ("今日はいい天気ですね！", "今日は天気がいいですね。"),
        ("私はコーヒーを２杯飲みました。", "私はコーヒーを2杯飲んだ。"),
        ("ｺｰﾋｰを飲みたい", "コーヒーを飲みたい"),
        ("「こんにちは」と彼は言った。", "彼は「こんにちは」と言った。"),
        ("価格は1,980円（税込）です。", "税込価格は1980円です。"),
        ("新幹線は時速300kmで走る。", "新幹線は時速300キロで走ります。"),
        ("ＡＩ技術の発展は目覚ましい。", "AI技術の進歩は著しい。"),
        ("明日、雨が降るかもしれません…", "明日は雨が降るかもしれない。"),
        ("彼女はピアノを弾くのが上手だ。", "彼女はピアノが上手です。"),
        ("2024年4月1日（月）に入社しました。", "2024年4月1日に入社した。"),
        ("ラーメン🍜が大好き！", "ラーメンが大好きです。"),
        ("電話番号は03-1234-5678です。", "電話番号：03-1234-5678"),
        ("この本は面白かった。\nまた読みたい。", "この本は面白い。\nもう一度読みたい。"),
        ("ありがとうございます。", ["どうもありがとう。", "ありがとうございました。"]),
        ("ソフトウェアのバージョンは v2.3.1 です。", "ソフトウェアのバージョン：v2.3.1"),
        ("富士山の高さは３，７７６ｍです。", "富士山は標高3,776メートルです。"),
        ("すみません、駅はどこですか？", "すみません、駅はどちらですか。"),
        ("〒100-0001 東京都千代田区", "東京都千代田区（〒100-0001）"),
        ("ゲーム・アニメ・マンガが好き", "ゲームとアニメと漫画が好き"),
        ("ｶﾞｷﾞｸﾞ゛ﾟ", "ガギグ"),
    ],
    "ar": [
        ("القطة تجلس على السجادة.", "القطة جالسة على السجادة."),
        ("ذهبتُ إلى المدرسة صباحاً.", "ذهبت إلى المدرسة في الصباح."),
        ("كم عمرك؟", "ما عمرك؟"),
        ("وُلد في عام ١٩٨٥م.", "ولد عام 1985."),
        ("السعر ١٬٢٥٠٫٥٠ ريال", "السعر 1,250.50 ريال"),
        ("قال: «سأعود غداً».", "قال إنه سيعود غداً."),
        ("الرياض، جدة، والدمام مدن سعودية.", "الرياض وجدة والدمام من مدن السعودية."),
        ("نسبة النجاح ٩٥٪", "نسبة النجاح 95%"),
        ("مرحباً بكم في موقعنا!", "أهلاً وسهلاً بكم في موقعنا."),
        ("هذا الكتاب – الطبعة الثانية – رائع", "هذه الطبعة الثانية من الكتاب رائعة"),
        ("يبلغ عدد السكان ۴۵ مليون نسمة", "عدد السكان 45 مليون"),
        ("استخدمتُ Python 3.11 لكتابة البرنامج.", "كتبت البرنامج باستخدام بايثون 3.11."),
        ("الساعة الآن ٣:٣٠ مساءً", "الساعة الثالثة والنصف مساءً"),
        ("أحبّ القراءة؛ خاصةً الروايات.", "أحب القراءة، وخاصة الروايات."),
        ("الســـلام عليكم", "السلام عليكم"),
        ("شكراً جزيلاً", ["شكرا جزيلا", "شكراً لك"]),
        ("درجة الحرارة ٤٠°م", "درجة الحرارة 40 درجة مئوية"),
        ("مرحبا\u200f بالعالم", "مرحبا بالعالم"),
        ("البريد: info@example.com", "البريد الإلكتروني info@example.com"),
        ("الجملة الأولى.\nالجملة الثانية.", "الجملة الأولى.\nجملة ثانية."),
        ("﷽ بسم الله ﷺ", "بسم الله الرحمن الرحيم"),
        ("١٠٠٪ من الطلاب نجحوا!", "نجح جميع الطلاب."),
    ],
    "ru": [
        ("Кошка сидит на коврике.", "Кошка сидела на коврике."),
        ("Москва — столица России.", "Столица России — Москва."),
        ("Он сказал: «Я приду завтра».", "Он сказал, что придёт завтра."),
        ("Цена: 1\u00a0299,99 ₽", "Цена 1299,99 рублей"),
        (
            "В 2023 г. население составило 146,4 млн человек.",
            "Население в 2023 году — 146,4 млн.",
        ),
        ("Ёлка стоит в углу.", "Елка стоит в углу."),
        ("ПРИВЕТ, МИР!", "Привет, мир!"),
        ("Температура: −15 °C", "Температура минус 15 градусов"),
        ("Это т.е. пример и т.д.", "Это, то есть, пример и так далее."),
        ("Улица Ленина, д. 5, кв. 12", "ул. Ленина, дом 5, квартира 12"),
        ("Я люблю читать книги... особенно классику.", "Я люблю читать книги, особенно классику."),
        ("№ 42 — выигрышный билет", "Билет № 42 выиграл"),
        ("Python 3.12 быстрее на 5%", "Python 3.12 на 5 % быстрее"),
        ("Миф о ΣΙΣΥΦΟΣ и ΟΔΥΣΣΕΥΣ", "Миф о Сизифе и Одиссее"),
        ("Спасибо большое!", ["Большое спасибо!", "Спасибо!"]),
        ("Телефон: +7 (495) 123-45-67", "Тел.: +7-495-123-45-67"),
        ("Первое предложение.\nВторое предложение.", "Первое предложение.\nТретье предложение."),
        ("Ура! 🎉🎉", "Ура!"),
        ("Он родился в 1990-х годах.", "Он родился в девяностых."),
        ("Весь день шёл дождь; мы остались дома.", "Весь день лил дождь, и мы сидели дома."),
        ("Версия 2.0.1-beta", "версия 2.0.1 beta"),
        ("Текст с тире-дефисом и – коротким тире", "Текст с дефисом и тире"),
    ],
    "hi": [
        ("बिल्ली चटाई पर बैठी है।", "बिल्ली चटाई पर बैठी थी।"),
        ("भारत की राजधानी नई दिल्ली है।", "नई दिल्ली भारत की राजधानी है।"),
        ("मुझे हिंदी पढ़ना पसंद है।", "मुझे हिन्दी पढ़ना अच्छा लगता है।"),
        ("उसकी उम्र २५ वर्ष है।", "उसकी उम्र 25 साल है।"),
        ("कीमत ₹1,499 है।", "कीमत १४९९ रुपये है।"),
        ("उसने कहा, “मैं कल आऊँगा।”", "उसने कहा कि वह कल आएगा।"),
        ("क्या आप मेरी मदद करेंगे?", "क्या आप मेरी सहायता कर सकते हैं?"),
        ("गंगा नदी ॥ पवित्र है ॥", "गंगा नदी पवित्र है।"),
        ("ज़िंदगी एक सफ़र है।", "ज़िन्दगी एक सफर है।"),
        ("दिल्ली, मुंबई और कोलकाता बड़े शहर हैं।", "दिल्ली, मुम्बई, कोलकाता बड़े शहर हैं।"),
        ("मैंने Python 3.11 सीखा।", "मैंने पायथन 3.11 सीखी।"),
        ("आज का तापमान ३५°C है।", "आज तापमान 35 डिग्री सेल्सियस है।"),
        ("धन्यवाद! 🙏", "धन्यवाद।"),
        ("नमस्ते, आप कैसे हैं?", ["नमस्ते! आप कैसे हैं?", "नमस्कार, आप कैसे हो?"]),
        ("पहला वाक्य।\nदूसरा वाक्य।", "पहला वाक्य।\nतीसरा वाक्य।"),
        ("९०% छात्र उत्तीर्ण हुए।", "90 प्रतिशत छात्र पास हुए।"),
        ("ॐ शांति शांति शांति", "ओम शांति"),
        ("यह रिपोर्ट (2024) महत्वपूर्ण है।", "2024 की यह रिपोर्ट महत्वपूर्ण है।"),
        ("फ़ोन: +91-98765-43210", "फोन नंबर +91 98765 43210"),
        ("विज्ञान और प्रौद्योगिकी", "विज्ञान एवं प्रौद्योगिकी"),
        ("क्\u200dष और क्\u200cष", "क्ष और क्ष"),
        ("रामायण — एक महाकाव्य", "रामायण एक महाकाव्य है"),
    ],
    "en": [
        ("The price is $1,299.99 (incl. VAT).", "It costs $1,299.99, VAT included."),
        ("Temperature: -5.5°C; humidity 80%.", "The temperature is −5.5 °C and humidity is 80 %."),
        ("Email me at john.doe@example.com!", "Send an email to john.doe@example.com."),
        ("I ❤️ NY 🗽", "I love New York."),
        ("Family: 👨\u200d👩\u200d👧 (ZWJ sequence)", "Family 👨\u200d👩\u200d👧"),
        ("Thumbs up 👍🏽!", "Thumbs up!"),
        ("C++ & C# are languages; so is F#.", "C++, C# and F# are programming languages."),
        (
            "Use &amp; escape &lt;tags&gt; &quot;properly&quot;.",
            'Use & escape <tags> "properly".',
        ),
        ("The year 2024. The end.", "In 2024. The end"),
        ("Version 3.11.7-rc1 released on 2024-01-15", "Version 3.11.7 rc1 was released 2024/01/15"),
        ("He said — and I quote — “no way”…", 'He said "no way"...'),
        ("E = mc² ± 0.1 × 10⁻³", "E = mc^2 +/- 0.1 x 10^-3"),
        ("50% off!!! Buy now → save €20", "Save 20 € now: 50 % off."),
        ("co-\noperate <skipped> well", "cooperate well"),
        ("Mr. O'Neil's dog (aged 3½) barked.", "Mr O'Neil's 3.5-year-old dog barked."),
        ("", ""),
        ("Hello", ""),
        (
            "The cat sat on the mat.",
            ["A cat sat on the mat.", "The cat was sitting on the mat.", "There is a cat on the mat."],
        ),
        ("Tabs\tand\u00a0non-breaking\u2009spaces\u3000here", "Tabs and non-breaking spaces here"),
        ("UPPER lower MiXeD Case İstanbul ΣΟΦΟΣ", "upper lower mixed case istanbul σοφος"),
        ("...,,,!!!???", "..."),
        ("Call 1-800-555-0199 or +44 (0)20 7946 0958", "Call 1 800 555 0199."),
        ("First line.\nSecond line.", "First line.\nAnother line."),
        ("Ratio 3:2, score 10/10, id #42, path C:\\Users\\x", "ratio 3:2 score 10 / 10 id 42"),
        (".5 and 5. and ,5 and 5,", "0.5 and 5 and 5"),
        ("trailing spaces   \t", "trailing spaces"),
        ("x\u001fy\u001cz", "x y z"),
    ],
}


def bleu_score(s) -> dict:
    return {
        "score": s.score,
        "counts": list(s.counts),
        "totals": list(s.totals),
        "precisions": list(s.precisions),
        "bp": s.bp,
        "sys_len": s.sys_len,
        "ref_len": s.ref_len,
    }


def ranges(pred) -> list[list[int]]:
    out: list[list[int]] = []
    start = None
    for cp in range(0x110000):
        hit = not 0xD800 <= cp <= 0xDFFF and pred(chr(cp))
        if hit and start is None:
            start = cp
        elif not hit and start is not None:
            out.append([start, cp - 1])
            start = None
    if start is not None:
        out.append([start, 0x10FFFF])
    return out


def tables() -> dict:
    classes = {name: regex.compile(p) for name, p in [("P", r"\p{P}"), ("S", r"\p{S}"), ("N", r"\p{N}")]}
    lower = [
        [cp, chr(cp).lower()]
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF and chr(cp).lower() != chr(cp)
    ]
    return {
        "zh_chinese": ranges(TokenizerZh._is_chinese_char),
        "intl_punctuation": ranges(lambda c: classes["P"].match(c) is not None),
        "intl_symbol": ranges(lambda c: classes["S"].match(c) is not None),
        "intl_number": ranges(lambda c: classes["N"].match(c) is not None),
        "python_lower": lower,
    }


def main() -> None:
    rows = []
    for lang, pairs in PAIRS.items():
        for i, (pred, refs) in enumerate(pairs):
            refs = [refs] if isinstance(refs, str) else list(refs)
            rows.append({"id": f"{lang}-{i:02d}", "lang": lang, "prediction": pred, "references": refs})

    bleus = {bleu_key(t, lc): BLEU(tokenize=t, lowercase=lc) for t, lc in BLEU_CONFIGS}
    for row in rows:
        row["tokens"] = {
            t: {
                "prediction": bleus[t]._preprocess_segment(row["prediction"]),
                "references": [bleus[t]._preprocess_segment(r) for r in row["references"]],
            }
            for t in TOKENIZERS
        }
        row["bleu"] = {
            bleu_key(t, lc): bleu_score(
                sacrebleu.sentence_bleu(row["prediction"], row["references"], tokenize=t, lowercase=lc)
            )
            for t, lc in BLEU_CONFIGS
        }
        row["chrf"] = {
            chrf_key(nw, ws, lc): CHRF(word_order=nw, whitespace=ws, lowercase=lc)
            .sentence_score(row["prediction"], row["references"])
            .score
            for nw, ws, lc in CHRF_CONFIGS
        }

    corpus = {}
    groups = {lang: [r for r in rows if r["lang"] == lang] for lang in PAIRS}
    groups["all"] = rows
    for name, group in groups.items():
        hyps = [r["prediction"] for r in group]
        width = max(len(r["references"]) for r in group)
        streams = [
            [r["references"][k] if k < len(r["references"]) else None for r in group] for k in range(width)
        ]
        entry = {"bleu": {}, "chrf": {}}
        for t, lc in BLEU_CONFIGS:
            metric = BLEU(tokenize=t, lowercase=lc)
            score = bleu_score(metric.corpus_score(hyps, streams))
            score["signature"] = str(metric.get_signature())
            entry["bleu"][bleu_key(t, lc)] = score
        for nw, ws, lc in CHRF_CONFIGS:
            metric = CHRF(word_order=nw, whitespace=ws, lowercase=lc)
            entry["chrf"][chrf_key(nw, ws, lc)] = {
                "score": metric.corpus_score(hyps, streams).score,
                "signature": str(metric.get_signature()),
            }
        corpus[name] = entry

    out = {
        "schema": "assay-tokenize-parity/1",
        "versions": {
            "python": sys.version.split()[0],
            "unicodedata": unicodedata.unidata_version,
            "sacrebleu": sacrebleu.__version__,
            "regex": regex.__version__,
        },
        "bleu_configs": {bleu_key(t, lc): {"tokenize": t, "lowercase": lc} for t, lc in BLEU_CONFIGS},
        "chrf_configs": {
            chrf_key(nw, ws, lc): {"word_order": nw, "whitespace": ws, "lowercase": lc}
            for nw, ws, lc in CHRF_CONFIGS
        },
        "pairs": rows,
        "corpus": corpus,
        "tables": tables(),
    }
    OUT.write_text(json.dumps(out, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
