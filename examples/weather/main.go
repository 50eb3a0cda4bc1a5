// Command weather is an example MCP server: a typed tool with input and
// output schemas derived from Go types, a resource, a resource template
// and a prompt with completion. Its forecasts are made up (and always the
// same): it needs no network.
//
//	go run ./examples/weather                       # stdio
//	go run ./examples/weather --http 127.0.0.1:8080  # Streamable HTTP at /mcp
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
	"github.com/mcpstack/mcpstack/wire"
)

// cities are the places the example knows.
var cities = []string{"Amsterdam", "Berlin", "Lisbon", "Oslo", "Paris", "Rome"}

type forecastIn struct {
	City string `json:"city" jsonschema:"description=The city,minLength=1"`
	Days int    `json:"days,omitempty" jsonschema:"description=How many days (1 to 7),minimum=1,maximum=7,default=3"`
}

type day struct {
	Date    string  `json:"date" jsonschema:"format=date"`
	HighC   float64 `json:"high_c"`
	LowC    float64 `json:"low_c"`
	Summary string  `json:"summary"`
}

type forecastOut struct {
	City string `json:"city"`
	Days []day  `json:"days"`
}

// start is the first forecast day: fixed, so that answers never change.
var start = time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)

func known(city string) (string, bool) {
	i := slices.IndexFunc(cities, func(c string) bool { return strings.EqualFold(c, city) })
	if i < 0 {
		return "", false
	}
	return cities[i], true
}

func forecast(_ context.Context, in forecastIn) (forecastOut, error) {
	city, ok := known(in.City)
	if !ok {
		return forecastOut{}, fmt.Errorf("no forecast for %q; known cities: %s", in.City, strings.Join(cities, ", "))
	}
	h := fnv.New32a()
	h.Write([]byte(city))
	seed := int(h.Sum32() % 10)
	summaries := []string{"sunny", "cloudy", "light rain", "windy", "showers"}
	out := forecastOut{City: city}
	for i := range in.Days {
		high := float64(16 + (seed+3*i)%12)
		out.Days = append(out.Days, day{
			Date: start.AddDate(0, 0, i).Format(time.DateOnly), HighC: high, LowC: high - float64(5+(seed+i)%4),
			Summary: summaries[(seed+i)%len(summaries)],
		})
	}
	return out, nil
}

type planTripIn struct {
	City string `json:"city" jsonschema:"description=Where to go"`
	Days string `json:"days,omitempty" jsonschema:"description=How many days (default 3)"`
}

func newApp() *app.App {
	a := app.New("weather", "1.0.0", app.WithTitle("Weather (example)"),
		app.WithInstructions("Made-up forecasts for a few cities: call forecast, or read weather://cities."))
	app.AddTool(a, app.Tool{Name: "forecast", Title: "Forecast", Description: "The weather for the next days in a city.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}}, forecast)
	a.AddResource(app.Resource{URI: "weather://cities", Name: "cities", Title: "Known cities", MIMEType: "application/json"},
		func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
			b, err := json.Marshal(cities)
			return app.Text(uri, "application/json", string(b)), err
		})
	a.AddResourceTemplate(app.ResourceTemplate{URITemplate: "weather://city/{name}", Name: "city", Title: "A city's forecast",
		MIMEType: "application/json", Complete: map[string]app.Completer{"name": app.Prefixed(cities...)}},
		func(ctx context.Context, uri string, vars map[string]string) (*mcp.ReadResourceResult, error) {
			f, err := forecast(ctx, forecastIn{City: vars["name"], Days: 3})
			if err != nil {
				return nil, wire.ResourceNotFound(uri)
			}
			b, err := json.Marshal(f)
			return app.Text(uri, "application/json", string(b)), err
		})
	app.AddPrompt(a, app.Prompt{Name: "plan_trip", Title: "Plan a trip", Description: "Plan a trip around the forecast.",
		Complete: map[string]app.Completer{"city": app.Prefixed(cities...)}},
		func(_ context.Context, in planTripIn) (*mcp.GetPromptResult, error) {
			days := in.Days
			if days == "" {
				days = "3"
			}
			text := fmt.Sprintf("Plan a %s-day trip to %s. Call the forecast tool first and suggest what to do each day given the weather.", days, in.City)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
	return a
}

func ptr[T any](v T) *T { return &v }

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP at http://`ADDR`/mcp instead of stdio")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := serve(ctx, *addr, log); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("weather", "err", err)
		os.Exit(1)
	}
}

// serve serves the app over HTTP on addr, or over stdio without one.
func serve(ctx context.Context, addr string, log *slog.Logger) error {
	if addr == "" {
		srv := app.NewServer(newApp(), server.WithLogger(log))
		defer srv.Close()
		return stdio.Serve(ctx, srv, os.Stdin, os.Stdout)
	}
	log.Info("serving", "url", "http://"+addr+"/mcp")
	srv := app.NewServer(newApp(), server.WithLogger(log))
	defer srv.Close()
	return mcphttp.ListenAndServe(ctx, addr, srv)
}
