// The other side of the HdrHistogram interval log, in hdr-histogram-js (an
// implementation independent of lib/hlog.c); NODE_PATH must reach it.
//   node hdr.js read FILE         one JSON line per interval it decodes
//   node hdr.js random DIR N SEED N logs of random values, and expect.json
//                                 with their summed count and largest max
//   node hdr.js fixtures DIR      the logs of tests/fixtures/hlog/
"use strict";
const hdr = require("hdr-histogram-js");
const fs = require("fs");
const path = require("path");

function histogram(digits, values) {
  const h = hdr.build({ lowestDiscernibleValue: 1,
    highestTrackableValue: 10000000, numberOfSignificantValueDigits: digits });
  for (const [value, n] of values)
    h.recordValueWithCount(value, n);
  return h;
}

// intervals: [tag or null, start_s, digits, [[value, count], ...]]
function writeLog(file, intervals) {
  let text = "";
  const w = new hdr.HistogramLogWriter((s) => { text += s; });
  w.outputLogFormatVersion();
  w.outputStartTime(1700000000000);
  w.outputLegend();
  for (const [tag, start, digits, values] of intervals) {
    const h = histogram(digits, values);
    if (tag)
      h.tag = tag;
    w.outputIntervalHistogram(h, start, start + 1, 1000);
  }
  fs.writeFileSync(file, text);
}

function read(file) {
  const r = new hdr.HistogramLogReader(fs.readFileSync(file, "utf8"));
  let h;
  while ((h = r.nextIntervalHistogram()) !== null)
    console.log(JSON.stringify({ tag: h.tag === "NO TAG" ? "" : h.tag,
      count: h.totalCount, max: h.maxValue,
      p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99),
      digits: h.numberOfSignificantValueDigits,
      lowest: h.lowestDiscernibleValue, highest: h.highestTrackableValue }));
}

function random(dir, n, seed) {
  let x = seed >>> 0;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  let count = 0, max = 0;
  for (let i = 0; i < n; i++) {
    const values = [];
    for (let k = next() % 2000 + 1; k > 0; k--) {
      // mostly tens of us, a tail up to seconds
      const v = next() % 100 ? next() % 500 + 1 : next() % 5000000 + 1;
      const c = next() % 50 + 1;
      values.push([v, c]);
      count += c;
    }
    const h = histogram(3, values);
    // as a decoder sees it: the highest value of the max's bucket
    max = Math.max(max, h.highestEquivalentValue(h.maxValue));
    writeLog(path.join(dir, `random-${i}.hlog`), [[null, 0, 3, values]]);
  }
  fs.writeFileSync(path.join(dir, "expect.json"),
                   JSON.stringify({ count: count, max: max }) + "\n");
}

function fixtures(dir) {
  // host-a: two intervals; 1010 corrected values, max 5000 us.
  writeLog(path.join(dir, "host-a.hlog"), [
    [null, 0, 3, [[100, 600], [250, 400]]],
    ["uncorrected", 0, 3, [[90, 1000]]],
    [null, 1, 3, [[5000, 10]]],
  ]);
  // host-b: 501 corrected values, max 90000 us (the largest of the two).
  writeLog(path.join(dir, "host-b.hlog"), [
    [null, 0, 3, [[200, 500], [90000, 1]]],
    ["uncorrected", 0, 3, [[180, 501]]],
  ]);
  // Two significant digits: the same values land in other buckets.
  writeLog(path.join(dir, "digits2.hlog"), [[null, 0, 2, [[100, 10]]]]);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "read")
  read(args[0]);
else if (cmd === "random")
  random(args[0], Number(args[1]), Number(args[2]));
else if (cmd === "fixtures")
  fixtures(args[0]);
else {
  console.error("usage: node hdr.js read FILE | random DIR N SEED | fixtures DIR");
  process.exit(64);
}
