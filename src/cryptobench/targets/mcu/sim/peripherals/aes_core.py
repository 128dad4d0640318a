"""AES (FIPS 197) and the modes an AES engine model computes (SP 800-38A ECB/CBC/CTR, SP 800-38C
CCM, SP 800-38D GCM), written from the standards in plain Python so that a peripheral model needs
no optional package. Speed does not matter here: a model computes a few blocks per simulated
operation; the cycles it charges are the model's, not this code's."""
from __future__ import annotations


def _xtime(a: int) -> int:
    a <<= 1
    return (a ^ 0x11B) if a & 0x100 else a


def _mul(a: int, b: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        a, b = _xtime(a), b >> 1
    return r


def _sbox() -> tuple[list[int], list[int]]:
    """FIPS 197 5.1.1: the multiplicative inverse in GF(2^8) followed by the affine map."""
    inv = [0] * 256
    for x in range(1, 256):
        for y in range(1, 256):
            if _mul(x, y) == 1:
                inv[x] = y
                break
    box = []
    for x in range(256):
        b, s = inv[x], inv[x]
        for _ in range(4):
            b = ((b << 1) | (b >> 7)) & 0xFF
            s ^= b
        box.append(s ^ 0x63)
    rev = [0] * 256
    for i, v in enumerate(box):
        rev[v] = i
    return box, rev


SBOX, INV_SBOX = _sbox()


def expand_key(key: bytes) -> list[list[int]]:
    """FIPS 197 5.2: the round keys, each 16 bytes."""
    nk = len(key) // 4
    if len(key) not in (16, 24, 32):
        raise ValueError(f"AES key of {len(key)} bytes; expected 16, 24 or 32")
    nr = nk + 6
    w = [list(key[4 * i:4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (nr + 1)):
        t = list(w[i - 1])
        if i % nk == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        elif nk > 6 and i % nk == 4:
            t = [SBOX[b] for b in t]
        w.append([a ^ b for a, b in zip(w[i - nk], t)])
    return [sum(w[4 * r:4 * r + 4], []) for r in range(nr + 1)]


def _shift(s: list[int], inverse: bool) -> list[int]:
    # state byte i is row i % 4, column i // 4; row r rotates left by r (right when inverse)
    return [s[(i + (-4 if inverse else 4) * (i % 4)) % 16] for i in range(16)]


def _mix(s: list[int], m: tuple[int, int, int, int]) -> list[int]:
    out = []
    for c in range(4):
        col = s[4 * c:4 * c + 4]
        out += [_mul(m[0], col[r]) ^ _mul(m[1], col[(r + 1) % 4]) ^ _mul(m[2], col[(r + 2) % 4])
                ^ _mul(m[3], col[(r + 3) % 4]) for r in range(4)]
    return out


def encrypt_block(rk: list[list[int]], block: bytes) -> bytes:
    s = [a ^ b for a, b in zip(block, rk[0])]
    for r in range(1, len(rk)):
        s = _shift([SBOX[b] for b in s], False)
        if r != len(rk) - 1:
            s = _mix(s, (2, 3, 1, 1))
        s = [a ^ b for a, b in zip(s, rk[r])]
    return bytes(s)


def decrypt_block(rk: list[list[int]], block: bytes) -> bytes:
    s = [a ^ b for a, b in zip(block, rk[-1])]
    for r in range(len(rk) - 2, -1, -1):
        s = [INV_SBOX[b] for b in _shift(s, True)]
        s = [a ^ b for a, b in zip(s, rk[r])]
        if r:
            s = _mix(s, (14, 11, 13, 9))
    return bytes(s)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def ecb(key: bytes, data: bytes, encrypt: bool) -> bytes:
    rk = expand_key(key)
    f = encrypt_block if encrypt else decrypt_block
    return b"".join(f(rk, data[i:i + 16]) for i in range(0, len(data), 16))


def cbc(key: bytes, iv: bytes, data: bytes, encrypt: bool) -> tuple[bytes, bytes]:
    """(output, the next IV: the last ciphertext block)."""
    rk, out, prev = expand_key(key), [], iv
    for i in range(0, len(data), 16):
        blk = data[i:i + 16]
        if encrypt:
            prev = encrypt_block(rk, _xor(blk, prev))
            out.append(prev)
        else:
            out.append(_xor(decrypt_block(rk, blk), prev))
            prev = blk
    return b"".join(out), prev


def inc(counter: bytes, width_bits: int) -> bytes:
    """The counter block plus one in its low `width_bits` bits (SP 800-38A B.1), big-endian."""
    n = int.from_bytes(counter, "big")
    mask = (1 << width_bits) - 1
    return ((n & ~mask) | ((n + 1) & mask)).to_bytes(16, "big")


def ctr(key: bytes, counter: bytes, data: bytes, width_bits: int = 128) -> tuple[bytes, bytes]:
    """(output, the counter after the last block used). A short last block uses part of its key stream."""
    rk, out = expand_key(key), []
    for i in range(0, len(data), 16):
        out.append(_xor(data[i:i + 16], encrypt_block(rk, counter)))
        counter = inc(counter, width_bits)
    return b"".join(out), counter


def gmul(x: int, y: int) -> int:
    """SP 800-38D 6.3: multiplication in GF(2^128), bit 0 the most significant."""
    z, v = 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ (0xE1 << 120) if v & 1 else v >> 1
    return z


def ghash(h: bytes, data: bytes) -> bytes:
    hi, y = int.from_bytes(h, "big"), 0
    for i in range(0, len(data), 16):
        y = gmul(y ^ int.from_bytes(data[i:i + 16].ljust(16, b"\0"), "big"), hi)
    return y.to_bytes(16, "big")


def gcm(key: bytes, j0: bytes, aad: bytes, data: bytes, encrypt: bool) -> tuple[bytes, bytes]:
    """(output, tag) for the pre-counter block J0 (SP 800-38D 7.1): the payload under CTR from
    inc32(J0), the tag E(J0) xor GHASH(A || C || lengths)."""
    rk = expand_key(key)
    h = encrypt_block(rk, bytes(16))
    out, _ = ctr(key, inc(j0, 32), data, 32)
    cipher = out if encrypt else data

    def pad(b: bytes) -> bytes:
        return b + bytes(-len(b) % 16)
    s = ghash(h, pad(aad) + pad(cipher) + (8 * len(aad)).to_bytes(8, "big") + (8 * len(cipher)).to_bytes(8, "big"))
    return out, _xor(encrypt_block(rk, j0), s)


def ccm(key: bytes, a0: bytes, m: int, aad: bytes, data: bytes, encrypt: bool) -> tuple[bytes, bytes]:
    """(output, tag of m bytes) for the counter block A0 = flags(L-1) || nonce || 0 (SP 800-38C
    A.2.3); B0 and the formatted AAD follow A.2.1/A.2.2."""
    lq = (a0[0] & 7) + 1
    nonce = a0[1:16 - lq]
    rk = expand_key(key)
    out, _ = ctr(key, inc(a0, 8 * lq), data, 8 * lq)
    plain = data if encrypt else out
    b0 = bytes([(0x40 if aad else 0) | (((m - 2) // 2) << 3) | (lq - 1)]) + nonce + len(plain).to_bytes(lq, "big")
    blocks = b0
    if aad:
        la = len(aad).to_bytes(2, "big") if len(aad) < 0xFF00 else b"\xff\xfe" + len(aad).to_bytes(4, "big")
        a = la + aad
        blocks += a + bytes(-len(a) % 16)
    blocks += plain + bytes(-len(plain) % 16)
    y = bytes(16)
    for i in range(0, len(blocks), 16):
        y = encrypt_block(rk, _xor(y, blocks[i:i + 16]))
    return out, _xor(y, encrypt_block(rk, a0))[:m]
