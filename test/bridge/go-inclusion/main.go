// Checks token-bridge chain-state inclusion proofs (SPEC §7.2 "Proof": RFC 9162 §2.1.3 over the
// chain digests, leaf SHA-256(0x00 || D)) with golang.org/x/mod/sumdb/tlog.CheckRecord, an
// independent implementation. Reads {"head","tree_size","chains":[{"digest","leaf_index","hashes"}]}
// on stdin; prints one "OK i" or "FAIL i: reason" line per chain.
package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"golang.org/x/mod/sumdb/tlog"
)

type chain struct {
	Digest    string   `json:"digest"`
	LeafIndex int64    `json:"leaf_index"`
	Hashes    []string `json:"hashes"`
}

type state struct {
	Head     string  `json:"head"`
	TreeSize int64   `json:"tree_size"`
	Chains   []chain `json:"chains"`
}

func hash32(b []byte) (tlog.Hash, error) {
	var h tlog.Hash
	if len(b) != len(h) {
		return h, fmt.Errorf("hash of %d bytes", len(b))
	}
	copy(h[:], b)
	return h, nil
}

func main() {
	var s state
	if err := json.NewDecoder(os.Stdin).Decode(&s); err != nil {
		fmt.Println("FAIL input:", err)
		os.Exit(2)
	}
	rawHead, err := hex.DecodeString(s.Head)
	if err != nil {
		fmt.Println("FAIL head:", err)
		os.Exit(2)
	}
	head, err := hash32(rawHead)
	if err != nil {
		fmt.Println("FAIL head:", err)
		os.Exit(2)
	}
	for i, c := range s.Chains {
		d, err := hex.DecodeString(c.Digest)
		if err != nil {
			fmt.Printf("FAIL %d: digest: %v\n", i, err)
			continue
		}
		var proof tlog.RecordProof
		bad := false
		for _, b64 := range c.Hashes {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err == nil {
				var h tlog.Hash
				h, err = hash32(raw)
				proof = append(proof, h)
			}
			if err != nil {
				fmt.Printf("FAIL %d: proof hash: %v\n", i, err)
				bad = true
				break
			}
		}
		if bad {
			continue
		}
		if err := tlog.CheckRecord(proof, s.TreeSize, head, c.LeafIndex, tlog.RecordHash(d)); err != nil {
			fmt.Printf("FAIL %d: %v\n", i, err)
			continue
		}
		fmt.Printf("OK %d\n", i)
	}
}
