#!/usr/bin/env python3
"""levels.py WAV [OFFSET]: peak and RMS of a 16-bit WAV, and the stretches that are audible (RMS over
-50 dBFS in 50 ms windows), with times in seconds (+OFFSET, e.g. to line up with bin/observe's events)."""
import sys, wave, array, math
w = wave.open(sys.argv[1]); off = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
rate, ch = w.getframerate(), w.getnchannels()
a = array.array("h", w.readframes(w.getnframes()))
n = len(a) // ch
peak = max((abs(x) for x in a), default=0) / 32768
rms = math.sqrt(sum(x * x for x in a) / max(len(a), 1)) / 32768
win = rate // 20
segs, cur = [], None
for i in range(0, n, win):
    chunk = a[i * ch:(i + win) * ch]
    r = math.sqrt(sum(x * x for x in chunk) / max(len(chunk), 1)) / 32768
    loud = r > 10 ** (-50 / 20)
    t = i / rate + off
    if loud and cur is None: cur = [t, t]
    if loud: cur[1] = t + win / rate
    if not loud and cur is not None: segs.append(cur); cur = None
if cur: segs.append(cur)
db = lambda x: "-inf" if x == 0 else "%.1f" % (20 * math.log10(x))
print("length %.2f s  peak %.4f (%s dBFS)  rms %.4f (%s dBFS)" % (n / rate, peak, db(peak), rms, db(rms)))
for s, e in segs: print("  audible %.2f-%.2f (%.2f s)" % (s, e, e - s))
