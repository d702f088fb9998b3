/** `npm start`: the development default. Replaced by the embedded witness + bridge demo as they land. */
process.stdout.write(
  'anchor-witness: nothing to serve yet — the protocol core is built; `anchor-witness serve` arrives with the "Witness node" issue.\n' +
    'Try: node bin/anchor-witness.js keygen --out /tmp/witness.pem\n',
);
