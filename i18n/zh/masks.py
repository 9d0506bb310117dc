"""“掩码”页（pages/masks.py）及其图表（figures/masks.py）。"""

STRINGS = {
    "masks.this_model": "这个模型",
    "masks.convention": (
        "约定：在 Glassbox 中，掩码值 **True（1，蓝色）= 可以关注**，False（0，灰色）= 被遮住。"
        "PyTorch 的 `nn.MultiheadAttention` 正好相反：在那里 `True` 表示*被屏蔽*。"
    ),
    "masks.intro": (
        "长度不同的句子，只有把短的用 [PAD] 填满，才能放进同一个张量。"
        "掩码保证这些填充物不改变任何结果，也保证解码器不能偷看下一个词元。"
    ),
    "masks.batch.header": "1. 填充后的一批句子",
    "masks.batch.sentence_n": "句子 {n}",
    "masks.batch.left_out": "空句子不放进这一批。",
    "masks.batch.running": "正在运行这一批句子…",
    "masks.batch.cannot_run": "这一批无法运行：其中一个句子没有模型能读的词元。请输入一些文字。",
    "masks.batch.truncated": "本页把超过 {n} 个词元的句子截到 {n} 个。",
    "masks.batch.explain.filler": (
        "计算机一次处理整张表时最快，所以几个句子作为一批（batch）一起送进模型：每个句子占表中的一行。"
        "每一行必须一样长，所以较短的句子用一个填充词元填满（用哪一个，以及它为什么不改变结果：见下文）。"
    ),
    "masks.batch.explain": (
        "计算机一次处理整张表时最快，所以几个句子作为一批（batch）一起送进模型：每个句子占表中的一行。"
        "每一行必须一样长，所以较短的句子用词元 [PAD] 填满。"
    ),
    "masks.batch.source": "源编号 (B, S) = ({B}, {S})：每一行都用 [PAD]（编号 {pad_id}）填充到最长句子的长度。第 1 行是侧边栏中的句子。",
    "masks.batch.decoder": "解码器的输入 (B, T) = ({B}, {T})：{what}，用同样的方式填充。",
    "masks.batch.decoder_random": "[BOS] + 句子本身（随机权重：模型自己的输出只是噪声）",
    "masks.batch.decoder_trained": "[BOS] + 模型对这个句子贪心解码的输出",
    "masks.encoder_only.batch": (
        "{model} 只有编码器：它没有解码器，所以没有解码器的输入、没有因果掩码，也没有交叉注意力。"
        "它的注意力只用键填充掩码。"
    ),
    "masks.encoder_only.causal": "{model} 没有解码器，所以不需要因果掩码：每个词元都可以看前后所有真实的词元。",
    "masks.encoder_only.kinds": "{model} 只有编码器：解码器的两种注意力并不存在。",
    "masks.two.header": "2. 两种掩码",
    "masks.padding.explain.filler": (
        "**键填充掩码**：任何查询都不能看填充的键。句子 b 还有词元的地方（前 n_b 个位置）掩码为 True"
        "（填充词元的编号可能也是一个真实词元，所以不能只看编号）。"
    ),
    "masks.padding.explain": "**键填充掩码**：任何查询都不能看 [PAD] 键。编号是真实词元的地方，掩码为 True。",
    "masks.causal.explain": "**因果（前瞻）掩码**：查询 t 只能看到键 0…t。解码器在学习写句子时，不能先看到它将要写出的答案。",
    "masks.merged.header": "3. 合并并广播到 [B, h, q, k]",
    "masks.merged.explain": (
        "在解码器的自注意力中，只有两种掩码都允许时，查询才能看这个键（∧ = “并且”）；"
        "编码器和交叉注意力只用填充掩码。然后把大小为 1 的轴重复（广播）："
        "每个头 h 用同一个掩码；对填充掩码来说，每个查询也用同一个。"
    ),
    "masks.kind.label": "哪一种注意力",
    "masks.kind.encoder": "编码器自注意力（填充）",
    "masks.kind.decoder": "解码器带掩码的自注意力（填充 ∧ 因果）",
    "masks.kind.cross": "解码器交叉注意力（源句填充）",
    "masks.merged.caption": (
        "这个注意力实际使用的掩码，形状 {shape}：每个句子一张图；全部 {h} 个头共用它。"
        "行是查询，列是键；[PAD] 所在的行也会计算，但没有人读取它们。"
    ),
    "masks.effect.header": "4. 掩码对权重的作用",
    "masks.effect.explain": (
        "在 softmax 之前，每个被遮住的格子都加上 −∞。因为 e^(−∞) = 0，它的权重就正好是 0，"
        "softmax 把每一行的全部权重（总和为 1）只分给允许的键。"
    ),
    "masks.effect.alibi": (
        "这个模型使用 ALiBi：它的自注意力分数已经包含位置偏置 B，位置 q 的查询对位置 k 的键是 −m_h·|q − k|（{form}；"
        "第 {head} 个头：m = {m}）。把鼠标移到分数的格子上，可以看到两项各自的值。交叉注意力不加偏置。"
    ),
    "masks.effect.alibi.encoder": "编码器用的对称形式",
    "masks.effect.alibi.decoder": "解码器用 −m_h·(q − k)，在因果掩码允许查询看的地方两者相等",
    "masks.effect.sentence": "句子",
    "masks.effect.head": "头（第 1 层）",
    "masks.what.sentence": "句子",
    "masks.what.head": "头",
    "masks.effect.check": (
        "句子 {row}，头 {head}：被遮住的格子上最大的权重是 {masked}（正好为 0），每一行之和都是 1"
        "（最大偏差 {error}，来自浮点舍入）。没有掩码的话，[PAD] 键和后面的词元都会在每一行中分走一部分权重。"
    ),
    "masks.effect.random": "随机权重：分数本身只是噪声；但掩码对它们的作用不是。",
    "masks.table.row": "行",
    "masks.fig.sentence": "句子 {n}",
    "masks.fig.position": "位置",
    "masks.fig.token": "词元",
    "masks.fig.id": "编号",
    "masks.fig.real_token": "真实词元",
    "masks.fig.real": "1 真实",
    "masks.fig.may_attend": "可以关注",
    "masks.fig.false": "0 False",
    "masks.fig.true": "1 True",
    "masks.fig.key_position": "键的位置",
    "masks.fig.query_position": "查询的位置",
    "masks.fig.query": "查询",
    "masks.fig.key": "键",
    "masks.fig.score": "分数",
    "masks.fig.weight": "权重",
    "masks.fig.panel.scores": "分数 QKᵀ/√d_k<br>（× = 被遮住）",
    "masks.fig.panel.scores_alibi": "分数 QKᵀ/√d_k + B<br>（B：ALiBi 偏置；× = 被遮住）",
    "masks.fig.alibi_bias": "ALiBi 偏置 B",
    "masks.fig.panel.without": "softmax<br>不加掩码",
    "masks.fig.panel.with": "softmax 加掩码<br>（模型的权重）",
    "masks.fig.padding_title": "键填充掩码 (B, 1, 1, S)",
    "masks.fig.causal_title": "因果掩码 (1, 1, T, T)",
    "masks.fig.source_ids": "源编号 ({B}, {S})",
    "masks.fig.target_ids": "目标编号 ({B}, {T})",
    "masks.fig.source_padding": "源句键填充掩码 ({B}, 1, 1, {S})",
    "masks.fig.causal": "因果掩码 (1, 1, {T}, {T})",
    # 只有解码器的模型（GPT-2、Llama）：一个输入，一种注意力（填充 ∧ 因果）
    "masks.intro.one_stack": (
        "长度不同的句子，只有把短的填满，才能放进同一个张量。"
        "掩码保证这些填充物不改变任何结果，也保证任何词元都看不到它后面的词元：{model} 在每个位置预测下一个词元。"
    ),
    "masks.batch.input": (
        "输入编号 (B, L) = ({B}, {L})：{model} 用它唯一的因果堆栈直接读这些句子。"
        "每一行都用编号 {pad_id} 填充到最长句子的长度，显示为 [PAD]：{filler}第 1 行是侧边栏中的句子。"
    ),
    "masks.batch.filler_pad": "这是模型的填充词元。",
    "masks.batch.filler_eos": "模型没有填充词元，所以用它的文本结束词元来填充（这里没有句子用到它）。编号是什么并不重要：下面的掩码说明哪些格子是填充。",
    "masks.batch.filler_other": (
        "模型没有一个本批句子都没用到的专用填充词元，所以这里用一个所有真实词元都没有的编号来填充。"
        "编号是什么并不重要：下面的掩码说明哪些格子是填充。"
    ),
    "masks.one_stack.batch": (
        "{model} 只有解码器：上面的编号就是它唯一的堆栈的输入。"
        "它没有第二个（解码器的）输入，也没有交叉注意力；它的自注意力用的是填充 ∧ 因果。"
    ),
    "masks.causal.explain.one_stack": (
        "**因果（前瞻）掩码**：查询 t 只能看到键 0…t。模型在每个位置预测下一个词元："
        "如果位置 t 能看到第 t + 1 个词元，它就是在读答案，而不是在预测。"
    ),
    "masks.one_stack.kinds": "{model} 只有解码器：编码器的自注意力和交叉注意力并不存在。",
    "masks.merged.explain.one_stack": (
        "在 {model} 的自注意力中，只有两种掩码都允许时，查询才能看这个键（∧ = “并且”）。"
        "然后把大小为 1 的轴重复（广播）：每个头 h 用同一个掩码；对填充掩码来说，每个查询也用同一个。"
    ),
    "masks.fig.input_ids": "输入编号 ({B}, {S})",
    "masks.fig.key_padding": "键填充 ({B}, 1, 1, {S})",
}
