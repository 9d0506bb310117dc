"""注意力页面（pages/attention.py）及其图表（figures/attention.py、figures/attention_views.py）。"""

STRINGS = {
    "attention.kind.encoder": "编码器自注意力",
    "attention.kind.decoder": "解码器掩码自注意力",
    "attention.kind.cross": "解码器交叉注意力",
    "attention.kind_layer": "{kind}，第 {layer} 层：",
    "attention.where.encoder": "查询、键和值都来自源句子。",
    "attention.where.decoder": "查询、键和值都来自解码器的输入；因果掩码遮住了“未来”：位置 t 只能看到位置 0…t（位置从 0 开始数）。",
    "attention.where.cross": "查询来自解码器（目标词元），键和值来自编码器的输出，即记忆（memory，源词元）。",
    "attention.intro": (
        "注意力让每个词元从其他词元那里收集信息。每个词元提出一个问题（它的**查询** q），"
        "亮出一个标签（它的**键** k），并提供一份内容（它的**值** v）；这三者都是词元的向量乘以学到的矩阵得到的。"
        "查询和键有多匹配，就看它们的点积 q·k，再除以 √d_k，让数值保持适中。"
        "**softmax** 把一个查询的所有得分变成加起来等于 1 的正权重，词元的新向量就是各个值按这些权重的加权和。"
        "模型把这件事并排做 h = {h} 次（h 个**头**），每个头都在自己的 d_k = {d_model}/{h} = {d_k} 维空间里，"
        "所以每个头可以关注不同的东西。"
    ),
    "attention.encoder_only": (
        "{model} 只有编码器（和 BERT 一样）：它有编码器自注意力，但没有解码器，"
        "所以不存在解码器掩码自注意力和交叉注意力。要看它们，请在侧边栏选择其他权重。"
    ),
    "attention.long": (
        "{n} 个词元：下面较大的热力图是概览——它们把相邻的词元合成一块来画（把鼠标移到格子上可看到是哪几个位置）。"
        "在图上拖动可以放大；头视图可以滚动，神经元视图和单个查询的柱状图始终显示精确的数值。"
    ),
    "attention.noise": "随机权重：这些图案只是噪声——模型还什么都没学到。在侧边栏切换到训练好的检查点，才能看到有意义的注意力。",
    "attention.widget.kind": "哪一种注意力",
    "attention.widget.layer": "层（1…{n}）",
    "attention.widget.head": "头（1…{n}）",
    "attention.widget.query": "查询词元",
    "attention.widget.key": "键词元",
    "attention.widget.bars": "柱状图",
    "attention.what.layer": "层",
    "attention.what.head": "头",
    "attention.what.position": "位置",
    "attention.choice.one_of": "可选：{options}",
    "attention.choice.unavailable": "{key}={value} 不可用（{allowed}）：改为显示 {showing}。",
    "attention.hv.title": "头视图：谁在看谁",
    "attention.hv.explain": (
        "左边是提问的词元（查询），右边是被看的词元（键）。每条线是一个注意力权重 α，"
        "一个 0 到 1 之间的数：线越深，查询从这个键的值里取得越多。每个头一种颜色。"
        "**把鼠标移到一个词元上**（或点击它以保持选中），就只显示它的线；另一侧的彩色小块按头显示它的权重。"
        "勾选或取消方框可以显示或隐藏各个头。"
    ),
    "attention.hv.sparse": (
        "{n} 个词元：为了保持流畅，每个查询在每个头里只画权重最大的 {k} 条线，并且把淡线加深"
        "（不透明度 = 权重 ÷ 该行最大的权重；取消勾选“加深淡线”即显示原始权重）。"
        "可以在视图里滚动；把行高调小就得到概览（这时把鼠标移到某一行上即可读出它的词元）。"
    ),
    "attention.hv.js.title": "{kind}，第 {layer} 层",
    "attention.hv.js.heads": "头：",
    "attention.hv.js.all": "全选",
    "attention.hv.js.none": "全不选",
    "attention.hv.js.stretch": "加深淡线（除以该行最大的权重）",
    "attention.hv.js.zoom": "行高",
    "attention.hv.js.hint": "把鼠标移到或点击一个词元，只看它的线（按 Esc 恢复全部）。",
    "attention.hv.js.queries": "查询（提问）",
    "attention.hv.js.keys": "键（被看）",
    "attention.hv.js.status_query": "查询“{token}”（位置 {pos}）在看这些键。",
    "attention.hv.js.status_key": "键“{token}”（位置 {pos}）被这些查询看着。",
    "attention.hv.js.strongest": "最强：“{token}”（位置 {pos}），权重 {weight}，{head}。",
    "attention.hv.js.nothing": "没有线：这里的权重都是 0（被掩码遮住）。",
    "attention.nv.title": "神经元视图：一个权重，一个数一个数地算",
    "attention.nv.explain": (
        "选一个查询词元和一个键词元。在一个头里，它们各是一个有 d_k = {d_k} 个数的向量："
        "查询的 q 和键的 k。把它们逐个相乘（q⊙k）：蓝色的柱让匹配度变大，红色的柱让它变小。"
        "所有乘积加起来就是点积 q·k。再除以 √d_k 得到得分 s，对这个查询的所有键做 softmax，"
        "得分就变成了权重 α。"
    ),
    "attention.nv.fig.q": "q：查询“{token}”（位置 {pos}）的向量",
    "attention.nv.fig.k": "k：键“{token}”（位置 {pos}）的向量",
    "attention.nv.fig.product": "q⊙k：各个乘积 q_i·k_i，加起来是 q·k = {dot}",
    "attention.nv.fig.dim": "维度",
    "attention.nv.fig.dims": "这个头的第 i 维（0…{last}）",
    "attention.nv.fig.summary": "q·k = {dot}   →   s = q·k / √{d_k} = {score}   →   α = {weight}",
    "attention.nv.softmax": (
        "权重不只取决于这一个得分：softmax 会把它和这个查询能看到的全部 {n} 个键的得分放在一起比较"
        "（各取 e^s，再除以它们的和），所以一个查询的所有权重加起来等于 1。"
        "这些数都是模型自己的：s 是追踪记录里的得分，α 是其中的权重。"
    ),
    "attention.nv.masked": "这个键在查询之后：因果掩码在 softmax 之前把它的得分换成 −∞，所以它的权重正好是 0（解码器不能偷看未来）。",
    "attention.steps.choose": "一个头，一步一步",
    "attention.steps.title": "第 {head} 个头，一步一步（真实数值）",
    "attention.steps.explain": (
        "下面每个矩阵都是模型处理这个句子时的真实张量。把鼠标移到格子上可看到精确数值；"
        "小矩阵（最多 {n} × {n}）的数值直接写在格子里。"
    ),
    "attention.steps.pooled": "较长的坐标轴（超过 {max}）按块显示：一个格子是该块的平均值（权重则取块中最大的权重）。悬停提示会写出这一块包含哪些位置。",
    "attention.steps.input": "**1. 输入。** 每一行是一个词元来自上一层的向量。",
    "attention.steps.projections": "**2. 这个头的投影**（每个词元 {d_model} → {d_k} 个数）。",
    "attention.steps.scores": "**3. 得分：每个查询和每个键有多匹配，** 再缩放一下，免得 softmax 饱和。",
    "attention.steps.softmax": (
        "**4. 先掩码，再 softmax。** 被遮住的格子（掩码里为 0）在 softmax 之前变成 −∞，"
        "所以它们的权重正好是 0；每一行权重加起来等于 1。"
    ),
    "attention.steps.heads": "**5. 对值做加权和，再把所有头拼在一起。**",
    "attention.steps.frame": "拼接结果中的橙色框是第 {head} 个头占的 {d_k} 列。",
    "attention.step.x": "X：这一层的输入",
    "attention.step.memory": "记忆：编码器的输出",
    "attention.step.w_q": "W_Q，第 {head} 个头",
    "attention.step.w_k": "W_K，第 {head} 个头",
    "attention.step.w_v": "W_V，第 {head} 个头",
    "attention.step.mask": "掩码（1 = 可以关注）",
    "attention.step.weights": "softmax → 权重",
    "attention.step.head_out": "头 {head} = 权重 · V",
    "attention.step.concat": "Concat(头 1…{h})",
    "attention.step.output": "输出 = Concat · W_O + b_O",
    "attention.step.w_o_all": "W_O（所有头）",
    "attention.step.w_o_rows": "W_O 的第 {first}…{last} 行：第 {head} 个头的那一份",
    "attention.axis.token": "词元",
    "attention.axis.dimension": "维度",
    "attention.axis.dk_dim": "d_k 维",
    "attention.axis.d_model_dim": "d_model 维",
    "attention.axis.concat_dim": "拼接维",
    "attention.axis.output_dim": "输出维",
    "attention.axis.query": "查询",
    "attention.axis.key": "键",
    "attention.axis.weight": "权重",
    "attention.axis.key_token": "键词元",
    "attention.axis.attention_weight": "注意力权重",
    "attention.hover.value": "数值",
    "attention.hover.block_mean": "该块的平均值",
    "attention.hover.block_max": "该块中最大的权重",
    "attention.head_n": "头 {n}",
    "attention.layer_n": "第 {n} 层",
    "attention.layer_head": "第 {layer} 层，头 {head}",
    "attention.step_by_step_mark": "（逐步展示）",
    "attention.all_heads.title": "第 {layer} 层的全部 {h} 个头",
    "attention.all_heads.explain": "{kind}：行是查询，列是键；每一行加起来等于 1。悬停可看精确权重。",
    "attention.trained.cross.pinyin": (
        "训练好的 汉字→拼音 模型：每个拼音音节都由它自己的汉字读出，所以学会了对齐的头会看那个汉字——"
        "一条亮的对角线（在最后一个解码器层里最清楚）。"
        "（位置从 0 开始数；解码器第 0 个位置读入 [BOS]，写出第 0 个汉字的音节，所以第 t 个位置应该看第 t 个汉字。）"
        "在第 {layer} 层的头 {head} 中，有 {share} 的行把最大的权重放在对角线上。"
    ),
    "attention.trained.cross.copy": (
        "训练来复制数字的模型：每个输出数字就是同一位置的输入数字，所以学会了对齐的头会看那里——一条亮的对角线。"
        "（位置从 0 开始数；解码器第 t 个位置写出第 t 个输入数字。）"
        "在第 {layer} 层的头 {head} 中，有 {share} 的行把最大的权重放在对角线上。"
    ),
    "attention.trained.cross.reverse": (
        "训练来倒序数字的模型：每个输出数字是从末尾倒着读的一个输入数字，所以学会了对齐的头会看那里——"
        "一条亮的反对角线。（位置从 0 开始数；输入有 S 个数字时，解码器第 t 个位置写出第 S − 1 − t 个输入数字。）"
        "在第 {layer} 层的头 {head} 中，有 {share} 的行把最大的权重放在反对角线上。"
    ),
    "attention.trained.cross.task": (
        "在“{task}”任务上训练的模型：比较交叉注意力的各个头——每个输出位置看的是哪些源词元？"
    ),
    "attention.trained.one_stack": (
        "训练好的权重：比较各个头——有的看紧挨着的前一个词元，有的停在第一个词元上，有的（归纳头，见上方表格）"
        "看当前词元上一次出现之后的那个词元。重复一个序列即可看到它们。"
    ),
    "attention.trained.other": "训练好的权重：比较各个头——有的看前一个或同一个位置，有的分散开来。最清楚的图案在解码器交叉注意力里（在上面选择它）。",
    "attention.trained.compare": "训练好的权重：比较各个头——有的看前一个或后一个词元，有的看自己，有的分散开来。",
    "attention.trained.bert": "在类似 BERT 的模型里，很多头在找不到要看的东西时，会把权重放在 [CLS] 或 [SEP] 上。",
    "attention.table.input": "解码器输入",
    "attention.table.writes": "写出",
    "attention.table.looks_at": "最关注",
    "attention.table.weight": "权重",
    # the three views below the step-by-step section (tabs; the label is kept in the URL)
    "attention.tab.head_view": "头视图",
    "attention.tab.neuron_view": "神经元视图",
    "attention.tab.heads": "本层的全部头",
    "attention.tab.grid": "每一层 × 每一个头",
    "attention.tab.query": "一个词元在看哪里",
    "attention.grid.title": "每一层 × 每一个头：{n} × {h}",
    "attention.grid.explain": "一眼看全所有层的{kind}（行：层，列：头）。上面逐步展示的是第 {layer} 层的头 {head}。",
    "attention.query.title": "一个词元在看哪里？",
    "attention.query.causal": "查询词元之后的键权重为 0：因果掩码不让解码器偷看后面的内容。",
    "attention.bars.head": "选中的头",
    "attention.bars.mean": "所有头的平均",
    "attention.bars.all": "每一个头",
    "attention.bars.mean_of": "{h} 个头的平均",
    "attention.formula.alibi": "B：这个模型的 ALiBi 偏置，加在每个自注意力的得分上（交叉注意力从不加）；m_h 是第 h 个头的斜率。",
    "attention.formula.rope.one": "R：这个模型的 RoPE 旋转，在每个自注意力里把每个查询和键按它的位置旋转。",
    "attention.formula.alibi.one": "B：这个模型的 ALiBi 偏置，加在每个自注意力的得分上；m_h 是第 h 个头的斜率。",
    "attention.formula.rope": "R：这个模型的 RoPE 旋转，在每个自注意力里把每个查询和键按它的位置旋转（交叉注意力从不旋转）。",
    "attention.step.alibi_bias": "ALiBi 偏置",
    "attention.steps.open": "展开：X → Q、K、V → QKᵀ → /√d_k → 掩码 → softmax → ·V → 拼接 → W_O，每一步都是真实数值",
    # ALiBi：位置偏置是得分里单独的一项（神经元视图和逐步展示）
    "attention.nv.explain_alibi": (
        "选一个查询词元和一个键词元。在一个头里，它们各是一个有 d_k = {d_k} 个数的向量："
        "查询的 q 和键的 k。把它们逐个相乘（q⊙k）：蓝色的柱让匹配度变大，红色的柱让它变小。"
        "所有乘积加起来就是点积 q·k。除以 √d_k，再加上 ALiBi 的位置偏置 b（这个模型的自注意力会加上它："
        "键离查询越远，偏置越低），就得到得分 s；对这个查询的所有键做 softmax，得分就变成了权重 α。"
    ),
    "attention.nv.alibi": (
        "b 是这一对词元的 ALiBi 位置偏置：第 {head} 个头的斜率 m = {m}，键离查询 |i − j| = {distance} 个位置，"
        "所以 b = −m·|i − j| = {bias}。模型在 softmax 之前把它加到 q·k/√d_k 上：s 是追踪记录里的得分，已经包含偏置。"
    ),
    "attention.nv.alibi_causal": (
        "b 是这一对词元的 ALiBi 位置偏置：第 {head} 个头的斜率 m = {m}，解码器用 b = −m·(i − j)，这里 i − j = {distance}，"
        "所以 b = {bias}（在因果掩码允许查询看的地方，它和 −m·|i − j| 相等）。模型在 softmax 之前把它加到 q·k/√d_k 上："
        "s 是追踪记录里的得分，已经包含偏置。"
    ),
    "attention.nv.fig.summary_bias": (
        "q·k = {dot}   →   s = q·k / √{d_k} + b = {scaled} + ({bias}) = {score}   →   α = {weight}"
    ),
    "attention.steps.scores_alibi": (
        "**3. 得分：每个查询和每个键有多匹配，** 再缩放一下，免得 softmax 饱和；"
        "然后这个模型（ALiBi）加上位置偏置 B，让远处的键得分更低：第 {head} 个头的斜率 m = {m}。"
        "softmax 读的得分是 Q Kᵀ/√d_k + B。"
    ),
    "attention.step.bias": "B = −m·|i − j|：ALiBi 偏置，m = {m}",
    "attention.step.bias_causal": "B = −m·(i − j)：ALiBi 偏置，m = {m}",
    "attention.steps.open_alibi": "展开：X → Q、K、V → QKᵀ → /√d_k → + ALiBi 偏置 → 掩码 → softmax → ·V → 拼接 → W_O，每一步都是真实数值",
    # 只有一个因果堆栈的模型（GPT-2、Llama、Qwen2），权重从模型文件夹加载
    "attention.this_model": "这个模型",
    "attention.decoder_only": (
        "{model} 只有解码器：一个由 {n} 层组成的因果堆栈，直接读入句子本身。它的注意力是掩码（因果）自注意力——"
        "每个词元只能看到自己和它前面的词元，永远看不到后面的。它没有编码器，所以不存在编码器自注意力和交叉注意力。"
    ),
    "attention.where.causal": (
        "查询、键和值都来自句子的词元，也就是模型唯一那个堆栈的输入；因果掩码遮住了“未来”："
        "位置 t 只能看到位置 0…t（位置从 0 开始数）。"
    ),
    "attention.loaded.compare": "权重从模型文件夹 {name} 加载：比较各个头——每个头都在看哪些词元？",
    "attention.gqa.explain": (
        "分组查询注意力：这个模型有 {h} 个查询头，却只有 {kv} 个键/值头，所以{groups}。"
        "共用同一个键/值头的几个头，键 k 和值 v 完全相同（W_K、W_V 也相同），只有查询 q 是各自的。"
    ),
    "attention.gqa.one": (
        "多查询注意力：这个模型的 {h} 个查询头共用同一个键/值头。它们的键 k 和值 v 完全相同（W_K、W_V 也相同），"
        "只有查询 q 是各自的。"
    ),
    "attention.gqa.group": "头 {first}–{last} 共用键/值头 {kv}",
    "attention.gqa.sep": "，",
    "attention.nv.fig.k_shared": "k：键“{token}”（位置 {pos}）的向量，来自键/值头 {kv}，由头 {first}–{last} 共用",
    "attention.nv.shared": (
        "头 {first}–{last} 共用键/值头 {kv}：对每个词元，它们的 k 都相同"
        "（换成这几个头中的另一个：k 那一行不变，只有 q 会变）。"
    ),
    "attention.nv.rope": "RoPE：这里显示的 q 和 k 已经按各自的位置旋转过——正是模型拿来相乘的向量。",
    "attention.steps.shared": (
        "第 {head} 个头读取键/值头 {kv}，它由头 {first}–{last} 共用：下面的 W_K、W_V、K 和 V 都属于这个键/值头，"
        "对这几个头完全相同；W_Q 和 Q 才是第 {head} 个头自己的。"
    ),
    "attention.steps.rope": "R：RoPE 在计算 Q Kᵀ 之前把每个查询和键按它的位置旋转；下面的 Q 和 K 是旋转后的（V 不旋转）。",
    "attention.step.w_k_shared": "W_K，键/值头 {kv}（头 {first}–{last}）",
    "attention.step.w_v_shared": "W_V，键/值头 {kv}（头 {first}–{last}）",
    "attention.step.output_nobias": "output = Concat · W_O（这个模型没有 b_O）",
    "attention.dims_from_0": "位置和维度都从 0 开始数，与论文的 PE(pos, 2i) 一致；层和头从 1 开始数，与 head₁ … head_h 一致。",
}
