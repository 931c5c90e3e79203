// Package collation orders strings as ICU's root collation does under pi's Node (ICU 78,
// Unicode 17): the order of JavaScript's localeCompare with the default locale, which
// pi's ls sorts names by. golang.org/x/text/collate carries Unicode 6.2's tables, so it
// places everything newer (emoji since 2012, scripts added since) by code point after the
// rest, where ICU places it by script.
//
// The tables (ces.bin) hold each code point's collation elements and ICU's contractions,
// read back from Node's Intl.Collator by gen.mjs (go generate; gen.mjs says how and what
// it cannot see). Strings are decomposed (NFD, Go's Unicode 15 tables) before they are
// looked up, as ICU does for text that is not in canonical order; Unicode 16 and 17
// characters with a decomposition are looked up whole, as ICU's canonical closure has them.
package collation

//go:generate go run gen.go
