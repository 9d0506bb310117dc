"""磁盘上的模型文件夹（weights="hf:<名称>"，ui/models.py、ui/hf_pipeline.py）：选择、加载、徽标，
以及这样的模型与论文模型相比缺少什么（ui/sidebar.py）。"""

STRINGS = {
    "models.why.type": "模型须以文字命名",
    "models.why.long": "作为模型名称太长",
    "models.why.control": "其中含有控制字符",
    "models.why.path": "它看起来像路径；模型只能按列表中的名称（hf:<名称>）选择，不能按位置选择",
    "models.why.unknown": "没有找到这个名称的模型；找到的有：{found}",
    "models.why.none_found": "无（请用 GLASSBOX_MODELS 指定存放模型的文件夹）",
    "models.why.unsupported": "{detail}",
    "models.why.too_big": "它以 float32 需要 {need} MB（{params} 个参数），而服务器只允许 {limit} MB（GLASSBOX_CACHE_MB）",
    "models.why.no_tokenizer": "它没有分词器文件（vocab.json + merges.txt、vocab.txt 或 tokenizer.json）",
    "models.why.unreadable": "无法读取它的文件：{detail}",
    "models.failed": "无法使用 {name}（{why}）；改为显示{fallback}权重。",
    "models.loading": "正在加载 {name}：{what}",
    "models.fixed_sizes": "尺寸由模型文件夹决定：d_model={d_model}，h={h}，N={n}，d_ff={d_ff}，norm={norm}。",
    "models.sentence.decoder": "句子（模型的输入）",
    "models.target.unread": "不读取：这个模型只有一个堆栈，只读入句子",
    "models.num_layers": "层数 N（它唯一的堆栈）",
    "models.option": "{name}（模型文件夹，{params}）",
    "models.unsupported_found": "找到但无法使用的模型文件夹：{names}。",
    "models.label": (
        "权重：从模型文件夹 {name} 加载（{architecture}）；{stack}：{layers} 层 × {heads}，"
        "d_model {d_model}；词表：{tokenizer}"
    ),
    "models.stack.decoder": "只有解码器",
    "models.stack.encoder": "只有编码器",
    "models.heads": "{h} 个头",
    "models.heads.gqa": "{h} 个查询头共享 {kv} 个键/值头",
    "models.paper": "与论文中的 Transformer 相比，{name} 有以下不同：{parts}。",
    "models.paper.decoder": "没有编码器，也没有交叉注意力（一个因果堆栈读入文本并预测下一个词元）",
    "models.paper.encoder": "没有解码器：没有掩码自注意力、交叉注意力和输出层",
    "models.paper.pre": "每个子层的归一化放在子层之前（前置归一化），而不是残差相加之后",
    "models.paper.rms": "用 RMSNorm（不减均值、没有偏置）代替 LayerNorm",
    "models.paper.gelu": "前馈网络用 GELU 代替 ReLU",
    "models.paper.swiglu": "用门控前馈网络（SwiGLU：三个矩阵）代替 ReLU",
    "models.paper.learned": "用学习得到的位置嵌入代替正弦编码",
    "models.paper.rope": "用旋转位置编码（RoPE）旋转查询和键，而不是把正弦编码加到嵌入上",
    "models.paper.no_scale": "嵌入不乘以 √d_model",
    "models.paper.embed_norm": "嵌入之后多一个 LayerNorm",
    "models.paper.gqa": "分组查询注意力（{h} 个查询头共享 {kv} 个键/值头）",
    "models.paper.and": "；",
}
