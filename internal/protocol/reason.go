package protocol

import (
	"math"
	"math/big"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// reasonOf says why a value failed a keyword. The library's own messages
// print numbers for people of a locale ("1×10⁹", "10,000"); a reason is
// read by models and programs too, so the bounds and counts here are
// printed as JSON writes them ("got 1000000000, want at most 10000").
func reasonOf(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Minimum:
		return "minimum: got " + number(k.Got) + ", want at least " + number(k.Want)
	case *kind.Maximum:
		return "maximum: got " + number(k.Got) + ", want at most " + number(k.Want)
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum: got " + number(k.Got) + ", want more than " + number(k.Want)
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum: got " + number(k.Got) + ", want less than " + number(k.Want)
	case *kind.MultipleOf:
		return "multipleOf: got " + number(k.Got) + ", want a multiple of " + number(k.Want)
	case *kind.MinLength:
		return "minLength: got " + strconv.Itoa(k.Got) + " characters, want at least " + strconv.Itoa(k.Want)
	case *kind.MaxLength:
		return "maxLength: got " + strconv.Itoa(k.Got) + " characters, want at most " + strconv.Itoa(k.Want)
	case *kind.MinItems:
		return "minItems: got " + strconv.Itoa(k.Got) + " items, want at least " + strconv.Itoa(k.Want)
	case *kind.MaxItems:
		return "maxItems: got " + strconv.Itoa(k.Got) + " items, want at most " + strconv.Itoa(k.Want)
	case *kind.MinProperties:
		return "minProperties: got " + strconv.Itoa(k.Got) + " properties, want at least " + strconv.Itoa(k.Want)
	case *kind.MaxProperties:
		return "maxProperties: got " + strconv.Itoa(k.Got) + " properties, want at most " + strconv.Itoa(k.Want)
	}
	return k.LocalizedString(printer)
}

// printer renders the library's other messages, which hold no numbers
// that a model would misread.
var printer = message.NewPrinter(language.English)

// number prints r short, as encoding/json would print it as a float64:
// an integer of up to 64 bits in full, anything else as the float64
// nearest it, with an exponent only below 1e-6 or from 1e21 on. A value a
// client sent as 1e1000000 is no megabyte of digits in the reason.
func number(r *big.Rat) string {
	if r.IsInt() && r.Num().IsInt64() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
