#!/usr/bin/env python3
"""Forgeries for the audit tests, written from the specifications alone (docs/data.md's shard
format, docs/training.md's trajectory and checkpoints, docs/repops.md's state hash v3): each
alters a published run and then recomputes every hash a forger can recompute without the
trainer's private key, so only replaying the steps can find what changed.

  token SHARD INDEX              add 1 to token INDEX of a shard; rewrite its trailer hash
  manifest MANIFEST              set every shard entry's sha256 to its file's trailer hash
  claim RUN MANIFEST             make RUN claim it trained on MANIFEST (run.json, the run's copy
                                 of its manifest, genesis, chain, checkpoints); drop
                                 attestation.json (a forger cannot re-sign)
  record RUN STEP FIELD          flip the last hex digit of FIELD of a trajectory record; rechain
  weight-bit RUN STEP            flip the lowest bit of one weight of checkpoint STEP; rewrite its
                                 meta.json (file SHA-256 and parameter state hash)
  sign BUNDLE KEY                recompute every file's size, SHA-256 and chunk hashes in
                                 BUNDLE/publication.json and sign it with KEY (a PEM private key;
                                 docs/audit.md, "Publishing a run")
  sign-attestation RUN KEY       re-sign RUN/attestation.json's statement with KEY (a PEM private
                                 key): a mirror claiming the trainer's run as its own
  swap-chunks BUNDLE KEY SHARD   flip the lowest bit of every token of SHARD (a bundle path) in
                                 the chunks that lie wholly inside its token array, list the
                                 forged chunks' hashes but leave the file's whole SHA-256 the
                                 genuine one, and sign with KEY
"""
import hashlib, json, os, struct, subprocess, sys

def sha(b): return hashlib.sha256(b).hexdigest()
def file_sha(p): return sha(open(p, 'rb').read())
def read_json(p): return json.load(open(p))
def write_json(p, j): open(p, 'w').write(json.dumps(j, indent=2) + '\n')

# ---- shards: [0,128) header, tokens at tokens_offset, "TRLSHEND" + SHA-256 of all before it.
def forge_token(path, index):
    b = bytearray(open(path, 'rb').read())
    token_bytes, = struct.unpack_from('<I', b, 12)
    tokens_offset, = struct.unpack_from('<Q', b, 32)
    vocab, = struct.unpack_from('<I', b, 96)
    fmt = '<H' if token_bytes == 2 else '<I'
    at = tokens_offset + index * token_bytes
    t, = struct.unpack_from(fmt, b, at)
    struct.pack_into(fmt, b, at, (t + 1) % vocab)
    body = bytes(b[:-40])
    open(path, 'wb').write(body + b'TRLSHEND' + hashlib.sha256(body).digest())

def forge_manifest(path):
    m = read_json(path)
    base = os.path.dirname(os.path.abspath(path))
    def fix(shards):
        for s in shards:
            s['sha256'] = open(os.path.join(base, s['path']), 'rb').read()[-32:].hex()
    for src in m['sources']: fix(src['shards'])
    for kind in ('validation', 'test'):
        for e in m.get(kind, []): fix(e['shards'])
    write_json(path, m)

# ---- the state hash v3 (docs/repops.md §7) of a safetensors file's tensors. Leaves are BLAKE3
# in derive-key mode: computed by Debian's b3sum, an implementation independent of trail's.
def blake3_derive_key(context, data):
    return bytes.fromhex(subprocess.run(['b3sum', '--derive-key', context, '--no-names'],
                                        input=data, capture_output=True, check=True).stdout.split()[0].decode())

CHUNK = 1 << 16
def merkle(level):
    if not level: return hashlib.sha256(b'').digest()
    while len(level) > 1:
        up = [hashlib.sha256(b'\x01' + level[i] + level[i + 1]).digest()
              for i in range(0, len(level) - 1, 2)]
        if len(level) % 2: up.append(level[-1])
        level = up
    return level[0]

def canonical_f32(data):
    out = bytearray(data)
    for i in range(0, len(out), 4):
        v, = struct.unpack_from('<I', out, i)
        if (v & 0x7F800000) == 0x7F800000 and (v & 0x7FFFFF): struct.pack_into('<I', out, i, 0x7FC00000)
    return bytes(out)

def state_hash(path):
    b = open(path, 'rb').read()
    n, = struct.unpack_from('<Q', b, 0)
    header = json.loads(b[8:8 + n])
    nodes = []
    for name, t in header.items():
        if name == '__metadata__': continue
        assert t['dtype'] == 'F32'
        lo, hi = t['data_offsets']
        data = canonical_f32(b[8 + n + lo:8 + n + hi])
        count = (hi - lo) // 4
        leaves = [blake3_derive_key('trail.chunk.v3', data[4 * i:4 * min(count, i + CHUNK)]
                                    + struct.pack('<QQ', i // CHUNK, min(CHUNK, count - i)))
                  for i in range(0, count, CHUNK)]
        node = hashlib.sha256(b'trail.tensor.v3' + struct.pack('<Q', len(name)) + name.encode()
                              + bytes([1]) + struct.pack('<Q', len(t['shape']))
                              + b''.join(struct.pack('<q', d) for d in t['shape']) + merkle(leaves))
        nodes.append((name, node.digest()))
    return merkle([d for _, d in sorted(nodes)]).hex()

def forge_weight_bit(run, step):
    d = os.path.join(run, 'checkpoints', 'step_%08d' % step)
    p = os.path.join(d, 'model.safetensors')
    b = bytearray(open(p, 'rb').read())
    n, = struct.unpack_from('<Q', b, 0)
    b[8 + n + 4 * 17] ^= 1
    open(p, 'wb').write(bytes(b))
    meta = read_json(os.path.join(d, 'meta.json'))
    meta['files']['model.safetensors'] = file_sha(p)
    meta['params_hash'] = state_hash(p)
    write_json(os.path.join(d, 'meta.json'), meta)

# ---- the trajectory: H_s = SHA-256(H_{s-1} || body_s), body = the line without its chain.
def rechain(run, edit=lambda step, rec: None):
    info = read_json(os.path.join(run, 'run.json'))
    prev = bytes.fromhex(info['genesis'])
    lines, chains = [], {}
    for line in open(os.path.join(run, 'trajectory.jsonl')):
        body = line.rstrip('\n')
        body = body[:body.rindex(',"chain":')] + '}'
        rec = json.loads(body)
        if edit(rec['step'], rec):
            body = json.dumps(rec, separators=(',', ':'))
        prev = hashlib.sha256(prev + body.encode()).digest()
        chains[rec['step']] = prev.hex()
        lines.append(body[:-1] + ',"chain":"%s"}\n' % prev.hex())
    open(os.path.join(run, 'trajectory.jsonl'), 'w').write(''.join(lines))
    ckdir = os.path.join(run, 'checkpoints')
    for name in sorted(os.listdir(ckdir)):
        step = int(name[len('step_'):])
        meta_path = os.path.join(ckdir, name, 'meta.json')
        meta = read_json(meta_path)
        meta['trajectory_chain'] = info['genesis'] if step == 0 else chains[step - 1]
        meta['manifest_sha256'] = info['manifest_sha256']
        write_json(meta_path, meta)
    if os.path.exists(os.path.join(run, 'attestation.json')):
        os.remove(os.path.join(run, 'attestation.json'))

def forge_claim(run, manifest):
    info = read_json(os.path.join(run, 'run.json'))
    info['data_manifest'] = os.path.abspath(manifest)
    info['manifest_sha256'] = file_sha(manifest)
    initial = read_json(os.path.join(run, 'checkpoints', 'step_00000000', 'meta.json'))['params_hash']
    info['genesis'] = sha(b'trail.trajectory.v1' + info['recipe_sha256'].encode()
                          + info['manifest_sha256'].encode() + initial.encode())
    write_json(os.path.join(run, 'run.json'), info)
    if os.path.exists(os.path.join(run, 'manifest.json')):
        open(os.path.join(run, 'manifest.json'), 'wb').write(open(manifest, 'rb').read())
    rechain(run)

def forge_record(run, step, field):
    def edit(s, rec):
        if s != step: return False
        v = rec[field]
        rec[field] = v[:-1] + ('1' if v[-1] == '0' else '0')
        return True
    rechain(run, edit)

# ---- publications: {"statement", "public_key", "signature"}, signed over the format line and
# the statement serialized compactly with sorted keys.
def sign_statement(doc, fmt, key):
    """Signs doc["statement"] as docs/audit.md says: FORMAT, a newline, the compact sorted JSON."""
    from cryptography.hazmat.primitives.serialization import (Encoding, PublicFormat,
                                                              load_pem_private_key)
    message = fmt + '\n' + json.dumps(doc['statement'], separators=(',', ':'), sort_keys=True)
    private = load_pem_private_key(open(key, 'rb').read(), None)
    doc['public_key'] = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
    doc['signature'] = private.sign(message.encode()).hex()

def sign_attestation(run, key):
    path = os.path.join(run, 'attestation.json')
    doc = read_json(path)
    sign_statement(doc, 'trail.run.attestation.v1', key)
    os.remove(path)  # the bundle's files may be hard links to the run's
    write_json(path, doc)

def sign_publication(bundle, key, keep_sha=None):
    doc = read_json(os.path.join(bundle, 'publication.json'))
    st, size = doc['statement'], doc['statement']['chunk_bytes']
    for f in st['files']:
        b = open(os.path.join(bundle, f['path']), 'rb').read()
        f['size'], f['chunks'] = len(b), [sha(b[i:i + size]) for i in range(0, len(b), size)]
        f['sha256'] = keep_sha[f['path']] if keep_sha and f['path'] in keep_sha else sha(b)
    sign_statement(doc, 'trail.publication.v1', key)
    write_json(os.path.join(bundle, 'publication.json'), doc)

def swap_chunks(bundle, key, shard):
    path = os.path.join(bundle, shard)
    genuine = file_sha(path)
    b = bytearray(open(path, 'rb').read())
    size = read_json(os.path.join(bundle, 'publication.json'))['statement']['chunk_bytes']
    token_bytes, = struct.unpack_from('<I', b, 12)
    tokens_offset, index_offset = struct.unpack_from('<QQ', b, 32)
    for at in range(0, len(b), size):
        end = min(at + size, len(b))
        if at >= tokens_offset and end <= index_offset:
            for t in range(at + (tokens_offset - at) % token_bytes, end, token_bytes):
                b[t] ^= 0x01  # little-endian: the token's lowest bit (stays within the vocabulary)
    os.remove(path)  # the bundle's files may be hard links to the run's
    open(path, 'wb').write(bytes(b))
    sign_publication(bundle, key, {shard: genuine})

if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'token': forge_token(args[0], int(args[1]))
    elif cmd == 'manifest': forge_manifest(args[0])
    elif cmd == 'claim': forge_claim(args[0], args[1])
    elif cmd == 'record': forge_record(args[0], int(args[1]), args[2])
    elif cmd == 'weight-bit': forge_weight_bit(args[0], int(args[1]))
    elif cmd == 'state-hash': print(state_hash(args[0]))
    elif cmd == 'sign': sign_publication(args[0], args[1])
    elif cmd == 'sign-attestation': sign_attestation(args[0], args[1])
    elif cmd == 'swap-chunks': swap_chunks(args[0], args[1], args[2])
    else: sys.exit('unknown forgery ' + cmd)
