"""各页共用的文字：导航、权重标记、运行提示。"""

STRINGS = {
    "nav.overview.title": "总览",
    "nav.overview.desc": "整个流程及各张量的形状",
    "nav.tokenization.title": "分词",
    "nav.tokenization.desc": "文本 → 词元 → 编号（BPE）",
    "nav.embeddings.title": "词嵌入",
    "nav.embeddings.desc": "编号 → 向量，乘以 √d_model",
    "nav.positional.title": "位置编码",
    "nav.positional.desc": "位置的正弦/余弦、可学习位置、RoPE、ALiBi",
    "nav.attention.title": "注意力",
    "nav.attention.desc": "softmax(QKᵀ/√d_k)·V，逐头计算",
    "nav.masks.title": "掩码",
    "nav.masks.desc": "填充掩码与因果掩码",
    "nav.model.title": "完整模型",
    "nav.model.desc": "编码器、解码器与下一个词元的概率",
    "nav.interventions.title": "干预",
    "nav.interventions.desc": "关闭注意力头、把一句话修补进另一句、每一层的猜测",
    "nav.training.title": "训练",
    "nav.training.desc": "现场训练一个小模型，然后使用它",
    "common.page_suffix": "Glassbox",
    "common.empty": "（空）",
    "common.no_tokens": "（没有词元）",
    "answer.greedy": "**模型的回答**（贪心解码：每次取概率最大的词元，再送回解码器，直到 [EOS]）：",
    "answer.teacher": "**模型的预测**：在给定目标的每个位置之后（教师强制：概率最大的下一个词元）：",
    "answer.next": "**模型的预测**：在句子每个词元之后概率最大的下一个词元：",
    "answer.sentence": "**这些随机权重的预测**：在句子每个词元之后概率最大的下一个词元。没有训练过，只是噪声",
    "weights.badge.trained": "权重：{label}",
    "weights.badge.trained_default": "训练好的 汉字→拼音 检查点",
    "weights.badge.random": "权重：随机初始化（种子 {seed}）—— 注意力图案只是噪声",
    "run.building": "正在构建模型…",
    "run.running": "正在运行模型…",
    "run.no_pipeline": "此版本尚无模型流程（core/tracing/pipeline.py）：模型视图为空。",
    "run.build_failed": "无法构建模型：{error}",
    "run.empty_sentence": "句子为空：请在侧边栏输入一个句子（任何语言），即可看到模型如何工作。",
    "run.no_tokens": "对模型而言句子为空（没有任何词元）：请在侧边栏输入文字。",
    "run.failed": "模型无法处理这段文字：{error}",
    "run.truncated": "句子有 {total} 个词元；模型只看前 {shown} 个（最多 {limit} 个；在侧边栏调高“显示的词元数”可看到更多）。",
    "run.encoder_only": (
        "{model} 只有编码器，没有解码器，所以本页没有可显示的内容。"
        "请在侧边栏选择其他权重，或打开编码器相关的页面（分词、词嵌入、位置编码、注意力）。"
    ),
}
STRINGS.update(
    {
        "weights.label.random": (
            "权重：随机初始化（种子 {seed}），未经训练 —— 注意力图案只是噪声；"
            "词表：字节级 BPE，在随附语料上学习了 {merges} 次合并"
        ),
        "weights.label.trained": "权重：训练好的 汉字→拼音 检查点，测试集音节准确率 {acc}",
        "weights.label.session": "权重：本会话中在 {task!r} 任务上训练（{steps} 步，测试集词元准确率 {acc}）",
        "weights.fallback": "无法使用训练好的检查点，改为显示随机权重。{detail}",
    }
)
