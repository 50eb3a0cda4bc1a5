package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
)

// The binary fixtures are made when first used rather than pasted as
// base64, so that what they hold is visible here and checked by the
// tests, and a process that never serves them (every mcpstack command but
// serve --profile conformance) does not pay for the PNG encoder's 850 KB.
var (
	// redPixelPNG is a 1x1 opaque red PNG, base64.
	redPixelPNG = sync.OnceValue(func() string { return base64.StdEncoding.EncodeToString(makePNG()) })
	// toneWAV is 10 ms of a 440 Hz tone, 8 kHz mono 16-bit PCM WAV, base64.
	toneWAV = sync.OnceValue(func() string { return base64.StdEncoding.EncodeToString(makeWAV()) })
)

func makePNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // cannot fail on an in-memory buffer
	}
	return b.Bytes()
}

const (
	wavRate    = 8000
	wavSamples = wavRate / 100 // 10 ms
)

func makeWAV() []byte {
	const dataLen = wavSamples * 2
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + dataLen))
	b.WriteString("WAVE")
	b.WriteString("fmt ")
	w(uint32(16))          // fmt chunk size
	w(uint16(1))           // PCM
	w(uint16(1))           // mono
	w(uint32(wavRate))     // sample rate
	w(uint32(wavRate * 2)) // byte rate
	w(uint16(2))           // block align
	w(uint16(16))          // bits per sample
	b.WriteString("data")
	w(uint32(dataLen))
	for i := range wavSamples {
		w(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/wavRate)))
	}
	return b.Bytes()
}
