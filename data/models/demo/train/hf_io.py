"""Writes (and reads back) a Hugging Face BERT folder: config.json, model.safetensors,
vocab.txt, tokenizer_config.json.

model.safetensors is written by hand (no safetensors package in Debian): an 8-byte
little-endian header length, a JSON header {name: {dtype, shape, data_offsets}} padded with
spaces to a multiple of 8 bytes, then the tensors' bytes back to back in header order.
"""

import json
import os
import struct

import numpy as np

DTYPES = {"F16": np.float16, "F32": np.float32, "BF16": None}


def write_atomic(path, data, mode="wb"):
    tmp = path + ".tmp"
    if mode == "w":
        f = open(tmp, "w", encoding="utf-8", newline="\n")
    else:
        f = open(tmp, mode)
    with f:
        f.write(data)
    os.replace(tmp, path)


def write_safetensors(path, tensors, dtype="F16", metadata=None):
    """tensors: {name: numpy array}; stored as dtype (F16 or F32), names in sorted order."""
    np_dtype = DTYPES[dtype]
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np_dtype)
        b = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((8 - len(hj) % 8) % 8)
    write_atomic(path, struct.pack("<Q", len(hj)) + hj + b"".join(blobs))


def read_safetensors(path):
    """{name: float32 numpy array}; checks that the offsets tile the data area exactly."""
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen])
    base = 8 + hlen
    out, spans = {}, []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt = np.dtype(DTYPES[info["dtype"]]).newbyteorder("<")
        a = np.frombuffer(data[base + b:base + e], dtype=dt).reshape(info["shape"])
        out[name] = a.astype(np.float32)
        spans.append((b, e))
    spans.sort()
    pos = 0
    for b, e in spans:
        if b != pos:
            raise ValueError(f"{path}: hole or overlap at data offset {pos}")
        pos = e
    if base + pos != len(data):
        raise ValueError(f"{path}: data area is {len(data) - base} bytes, tensors cover {pos}")
    return out


def hf_config(cfg):
    return {
        "architectures": ["BertForMaskedLM"],
        "model_type": "bert",
        "vocab_size": cfg["vocab_size"],
        "hidden_size": cfg["hidden_size"],
        "num_hidden_layers": cfg["num_hidden_layers"],
        "num_attention_heads": cfg["num_attention_heads"],
        "intermediate_size": cfg["intermediate_size"],
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": cfg["max_position_embeddings"],
        "type_vocab_size": cfg["type_vocab_size"],
        "initializer_range": cfg["initializer_range"],
        "layer_norm_eps": cfg["layer_norm_eps"],
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "classifier_dropout": None,
        "use_cache": True,
        "torch_dtype": "float16",
    }


def tokenizer_config(max_len):
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "do_basic_tokenize": True,
        "tokenize_chinese_chars": True,
        "strip_accents": None,
        "model_max_length": max_len,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
        "clean_up_tokenization_spaces": True,
    }


def write_folder(out_dir, cfg, state, vocab):
    """state: {hf name: numpy float32}; writes the four files of the HF layout."""
    os.makedirs(out_dir, exist_ok=True)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), state, "F16")
    write_atomic(os.path.join(out_dir, "config.json"),
                 json.dumps(hf_config(cfg), indent=2) + "\n", "w")
    write_atomic(os.path.join(out_dir, "tokenizer_config.json"),
                 json.dumps(tokenizer_config(cfg["max_position_embeddings"]), indent=2) + "\n", "w")
    write_atomic(os.path.join(out_dir, "vocab.txt"), "".join(t + "\n" for t in vocab), "w")


def config_from_hf(hf):
    keys = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "intermediate_size", "max_position_embeddings", "type_vocab_size",
            "initializer_range", "layer_norm_eps")
    return {k: hf[k] for k in keys}


def read_folder(folder):
    """(cfg, {name: float32 array}, vocab list) as written by write_folder."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = config_from_hf(json.load(f))
    state = read_safetensors(os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "vocab.txt"), encoding="utf-8") as f:
        vocab = [ln.rstrip("\n") for ln in f]
    return cfg, state, vocab
