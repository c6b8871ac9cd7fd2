// Haraka plugin of the benchmark: accept every recipient, discard every message at queue
// (answering 250), and count them. The count is written to BENCH_COUNT_FILE every 50 ms
// when it changed, so the benchmark reads the 250s on the server's side without a
// per-message write.

const fs = require('node:fs');

let accepted = 0;
let written = -1;

exports.register = () => {
  const file = process.env.BENCH_COUNT_FILE;
  if (!file) return;
  const flush = () => {
    if (accepted === written) return;
    written = accepted;
    fs.writeFileSync(file, String(accepted));
  };
  flush();
  setInterval(flush, 50).unref();
};

// The load comes from loopback: answer the reverse lookup here rather than ask the system's
// resolver once per connection (the gateway does no such lookup either).
exports.hook_lookup_rdns = (next) => {
  next(OK, 'localhost');
};

exports.hook_rcpt = (next) => {
  next(OK);
};

exports.hook_queue = (next) => {
  accepted += 1;
  next(OK);
};
