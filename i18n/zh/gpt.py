"""在本项目中训练的小 GPT（weights="gpt"，core/training/language.py）：选项、标记与回退说明。"""

STRINGS = {
    "sidebar.weights.gpt": "在这里训练的小 GPT（English + 中文）",
    "weights.label.gpt": (
        "权重：在这里训练的小 GPT；只有解码器，{layers} 层 × {heads} 个头，d_model {d_model}，"
        "训练文本为英文和中文的名言、诗词与歌谣（Debian 的 fortune 文件），"
        "测试集困惑度 {ppl}；词表：字节级 BPE，在其训练文本上学到的 {merges} 次合并"
    ),
    "gpt.fallback": "无法使用小 GPT，改为显示随机权重。{detail}",
    "settings.why.no_gpt": "assets/gpt.pt 处没有小 GPT",
    "sidebar.no_gpt": "缺少小 GPT（assets/gpt.pt）：运行 `python -m core.training --task lm --out assets/gpt.pt` 训练它。",
}
