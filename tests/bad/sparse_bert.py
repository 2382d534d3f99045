"""A Hugging Face BERT folder with all-zero F32 weights written as a sparse file (nothing is
read until a run touches it, nothing is downloaded): the shape tests need (bert-base for
Ctrl-C, multi-GB for the memory checks) at no disk cost.  Shared by run-catalogue.py
(`setup sparse-model`) and tests/cli/test-interrupt.py.  Plain python3."""
import json
import os
import struct


def bert_shapes(L, D, F, P, V, prefix="", mlm=False):
    """The tensor names and shapes of a BERT checkpoint (optionally with its masked-LM head)."""
    shapes = [(prefix + "embeddings.word_embeddings.weight", [V, D]),
              (prefix + "embeddings.position_embeddings.weight", [P, D]),
              (prefix + "embeddings.token_type_embeddings.weight", [2, D]),
              (prefix + "embeddings.LayerNorm.weight", [D]), (prefix + "embeddings.LayerNorm.bias", [D])]
    for i in range(L):
        p = prefix + "encoder.layer.%d." % i
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            shapes += [(p + part + ".weight", [D, D]), (p + part + ".bias", [D])]
        shapes += [(p + "attention.output.LayerNorm.weight", [D]),
                   (p + "attention.output.LayerNorm.bias", [D]),
                   (p + "intermediate.dense.weight", [F, D]), (p + "intermediate.dense.bias", [F]),
                   (p + "output.dense.weight", [D, F]), (p + "output.dense.bias", [D]),
                   (p + "output.LayerNorm.weight", [D]), (p + "output.LayerNorm.bias", [D])]
    if mlm:
        shapes += [("cls.predictions.transform.dense.weight", [D, D]),
                   ("cls.predictions.transform.dense.bias", [D]),
                   ("cls.predictions.transform.LayerNorm.weight", [D]),
                   ("cls.predictions.transform.LayerNorm.bias", [D]),
                   ("cls.predictions.decoder.weight", [V, D]), ("cls.predictions.bias", [V])]
    return shapes


def write_sparse_bert(d, L, H, D, F, P, vocab, prefix="", mlm=False):
    """model.safetensors (header for those shapes, zero data as a hole), config.json and
    vocab.txt (the list vocab, one token a line) in folder d."""
    V = len(vocab)
    header, off = {}, 0
    for name, shape in bert_shapes(L, D, F, P, V, prefix, mlm):
        n = 4
        for s in shape:
            n *= s
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + n]}
        off += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + off)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "bert", "hidden_size": D, "num_hidden_layers": L,
                   "num_attention_heads": H, "intermediate_size": F, "vocab_size": V,
                   "max_position_embeddings": P, "type_vocab_size": 2}, f)
