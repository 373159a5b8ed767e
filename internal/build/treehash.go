package build

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// visitFunc sees each file hashTree reads: its path relative to the root,
// its mode, its bytes (regular files) or its link target (symbolic links).
type visitFunc func(rel string, mode fs.FileMode, data []byte, link string) error

// hashTree returns git's tree hash of the files under root named by files
// (relative, forward slashes): what git write-tree would give for an index
// holding exactly them, so a clean working tree has the same hash as its
// commit's tree. Files listed but absent are left out; visit, when not nil,
// sees each file read.
func hashTree(root string, files []string, visit visitFunc) (string, error) {
	top := &treeNode{children: map[string]*treeNode{}}
	for _, rel := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		var mode string
		var data []byte
		var link string
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			mode = "120000"
			if link, err = os.Readlink(p); err != nil {
				return "", err
			}
			data = []byte(link)
		case fi.Mode().IsRegular():
			mode = "100644"
			if fi.Mode()&0o100 != 0 {
				mode = "100755"
			}
			if data, err = os.ReadFile(p); err != nil {
				return "", err
			}
		default:
			continue
		}
		if visit != nil {
			if err := visit(rel, fi.Mode(), data, link); err != nil {
				return "", err
			}
		}
		top.add(strings.Split(rel, "/"), mode, gitHash("blob", data))
	}
	sum := top.hash()
	return hex.EncodeToString(sum[:]), nil
}

type treeNode struct {
	mode     string
	sum      [sha1.Size]byte
	children map[string]*treeNode // a directory when not nil
}

func (n *treeNode) add(parts []string, mode string, sum [sha1.Size]byte) {
	if len(parts) == 1 {
		n.children[parts[0]] = &treeNode{mode: mode, sum: sum}
		return
	}
	c := n.children[parts[0]]
	if c == nil || c.children == nil {
		c = &treeNode{children: map[string]*treeNode{}}
		n.children[parts[0]] = c
	}
	c.add(parts[1:], mode, sum)
}

// hash returns the git object hash of a directory node. Git orders a tree's
// entries by name, a directory's name compared as if it ended in "/".
func (n *treeNode) hash() [sha1.Size]byte {
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	key := func(name string) string {
		if n.children[name].children != nil {
			return name + "/"
		}
		return name
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	var body []byte
	for _, name := range names {
		c := n.children[name]
		mode, sum := c.mode, c.sum
		if c.children != nil {
			mode, sum = "40000", c.hash()
		}
		body = append(body, mode+" "+name+"\x00"...)
		body = append(body, sum[:]...)
	}
	return gitHash("tree", body)
}

func gitHash(kind string, data []byte) [sha1.Size]byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	return sum
}
