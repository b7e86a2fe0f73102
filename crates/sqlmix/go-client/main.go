// Command sqlmix-go-client is sqlmix's transaction mix driven through Juju's client stack:
// go-dqlite's driver under Go's database/sql, one *sql.DB per model database (Juju's
// layout), and Juju's transaction runner: a semaphore of K slots held around each
// transaction attempt, and the errors Juju calls retryable retried outside it with Juju's
// policy (-retry juju, the default: internal/database/txn/transaction.go's retry.Call with
// BackoffFunc retry.ExpBackoff(1ms, 100ms, 0.8, true), Attempts 250, MaxDuration 25 s),
// or with the lab's own Rust runner's (-retry doubling: 1 ms doubling to 100 ms, jittered,
// at most 250 attempts, as crates/sqlmix/src/gate.rs).
//
// It drives a node the lab started (the cell's process) and created the schema and units
// on; it runs a warm-up, then a window, then prints one JSON object on stdout: the
// window's figures and, for the lab's verification, every write it reported committed
// or failed over the whole run. It is not a benchmark of its own: the lab decides what
// the figures mean and checks them against what the node stores.
//
// Each transaction is BEGIN, its statements and COMMIT on one connection taken from the
// pool (database/sql's Conn), each a request to the node, as go-dqlite's Tx sends them;
// a COMMIT that fails is followed by a ROLLBACK so the connection goes back clean (the
// lab's Rust client does the same).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canonical/go-dqlite/client"
	"github.com/canonical/go-dqlite/driver"
)

// The statements, as crates/sqlmix/src/db.rs and libdqlite/mod.rs have them.
const (
	selectUnit   = "SELECT agent_status, version FROM units WHERE model = ?1 AND name = ?2"
	selectNewest = "SELECT MAX(seq) FROM events WHERE model = ?1 AND unit = ?2"
	countUnits   = "SELECT COUNT(*) FROM units WHERE model = ?1"
	updateUnit   = "UPDATE units SET agent_status = ?3, version = version + 1 WHERE model = ?1 AND name = ?2"
	selectVer    = "SELECT version FROM units WHERE model = ?1 AND name = ?2"
	insertEvent  = "INSERT INTO events (model, unit, kind, seq, payload) VALUES (?1, ?2, 'agent-status', ?3, ?4)"
	cullEvents   = "DELETE FROM events WHERE model = ?1 AND unit = ?2 AND seq <= ?3"
	// The change stream's poll, as Juju's reads its change_log: the newest change of each
	// changed row (here a unit's events) past the last id seen.
	selectChanges  = "SELECT MAX(id), unit FROM events WHERE model = ?1 AND id > ?2 GROUP BY unit ORDER BY 1"
	selectNewestID = "SELECT MAX(id) FROM events WHERE model = ?1"
	streamFirst    = 100 * time.Millisecond
	streamCap      = 10 * time.Second
	streamFactor   = 1.4
	cullEvery      = 10
	eventsKept     = 5
	maxAttempts    = 250
	maxDuration    = 25 * time.Second
	backoffFirst   = time.Millisecond
	backoffCap     = 100 * time.Millisecond
	jujuFactor     = 0.8
	failedKept     = 1000
)

func modelName(i int) string {
	if i == 0 {
		return "controller"
	}
	return fmt.Sprintf("model-%04d", i)
}

func unitName(i int) string { return fmt.Sprintf("unit/%d", i) }

// isRetryable is Juju's IsErrRetryable (internal/database/txn): a busy or locked error
// from the driver, or an error whose text, at any depth of wrapping, says the database is
// locked, a transaction was started within one, the connection went bad or a checkpoint
// is in progress. Anything else ends the transaction.
func isRetryable(err error) bool {
	var e driver.Error
	if errors.As(err, &e) {
		code := e.Code & 0xff
		if code == 5 || code == 6 {
			return true
		}
	}
	for ; err != nil; err = errors.Unwrap(err) {
		msg := err.Error()
		for _, s := range []string{
			"database is locked",
			"database is busy",
			"cannot start a transaction within a transaction",
			"bad connection",
			"checkpoint in progress",
		} {
			if strings.Contains(msg, s) {
				return true
			}
		}
	}
	return false
}

// jujuBackoff is juju/retry's ExpBackoff(1ms, 100ms, 0.8, true) before retry `attempt`
// (0 for the first): minDelay x 0.8^attempt, jittered by a uniform draw below it, clamped
// to [1 ms, 100 ms]. With a factor under 1 every computed delay is at most 1 ms, so the
// clamp makes every retry wait 1 ms: Juju retries a busy transaction every millisecond.
func jujuBackoff(attempt int, rng *rand.Rand) time.Duration {
	d := float64(backoffFirst) * math.Pow(jujuFactor, float64(attempt))
	d *= rng.Float64()
	d = math.Max(d, float64(backoffFirst))
	d = math.Min(d, float64(backoffCap))
	return time.Duration(d)
}

// doublingBackoff is the lab's Rust runner's policy (gate.rs): 1 ms doubling to 100 ms,
// each wait drawn from half to all of it.
func doublingBackoff(attempt int, rng *rand.Rand) time.Duration {
	shift := attempt
	if shift > 10 {
		shift = 10
	}
	full := backoffFirst << uint(shift)
	if full > backoffCap {
		full = backoffCap
	}
	return time.Duration(float64(full) * (0.5 + 0.5*rng.Float64()))
}

type key struct{ model, unit int }

type committed struct {
	Model         int    `json:"model"`
	Unit          int    `json:"unit"`
	Count         int64  `json:"count"`
	NewestVersion int64  `json:"newest_version"`
	NewestStatus  string `json:"newest_status"`
}

// figures are one worker's window counts (summed at the end).
type figures struct {
	Txns       int64 `json:"txns"`
	Reads      int64 `json:"reads"`
	Writes     int64 `json:"writes"`
	Errors     int64 `json:"errors"`
	Retries    int64 `json:"retries"`
	BusyErrors int64 `json:"busy_errors"`
	BackoffNs  int64 `json:"backoff_ns"`
	GateWaitNs int64 `json:"gate_wait_ns"`
	GateHeldNs int64 `json:"gate_held_ns"`
	LatencySum int64 `json:"latency_ns"`
	// -load seed only: the change streams' polls, their watchers' reads (both also in
	// Txns and Reads), and steps that started behind their pace.
	Polls        int64 `json:"polls"`
	WatcherReads int64 `json:"watcher_reads"`
	LateSteps    int64 `json:"late_steps"`
}

func (f *figures) add(o figures) {
	f.Txns += o.Txns
	f.Reads += o.Reads
	f.Writes += o.Writes
	f.Errors += o.Errors
	f.Retries += o.Retries
	f.BusyErrors += o.BusyErrors
	f.BackoffNs += o.BackoffNs
	f.GateWaitNs += o.GateWaitNs
	f.GateHeldNs += o.GateHeldNs
	f.LatencySum += o.LatencySum
	f.Polls += o.Polls
	f.WatcherReads += o.WatcherReads
	f.LateSteps += o.LateSteps
}

type worker struct {
	index        int
	rng          *rand.Rand
	serial       int64
	fig          figures
	committed    map[key]*committed
	failed       []string
	partialReads int64
	firstError   string
}

type run struct {
	dbs      []*sql.DB
	gate     chan struct{}
	units    int
	readPct  int
	counting atomic.Int32  // 0 warm-up, 1 window, 2 closed
	closed   chan struct{} // closed when counting turns 2: wakes the sleepers
	// backoff is the wait before retry `attempt` (0 for the first): jujuBackoff or
	// doublingBackoff.
	backoff func(attempt int, rng *rand.Rand) time.Duration
}

type readResult struct {
	status  string
	version int64
	newest  int64
	count   int64
}

func (r *run) readTxn(ctx context.Context, c *sql.Conn, m, u string) (readResult, error) {
	var res readResult
	var newest sql.NullInt64
	if err := c.QueryRowContext(ctx, selectUnit, m, u).Scan(&res.status, &res.version); err != nil {
		return res, err
	}
	if err := c.QueryRowContext(ctx, selectNewest, m, u).Scan(&newest); err != nil {
		return res, err
	}
	res.newest = newest.Int64
	if err := c.QueryRowContext(ctx, countUnits, m).Scan(&res.count); err != nil {
		return res, err
	}
	return res, nil
}

func (r *run) writeTxn(ctx context.Context, c *sql.Conn, m, u, status string) (int64, error) {
	if _, err := c.ExecContext(ctx, updateUnit, m, u, status); err != nil {
		return 0, err
	}
	var version int64
	if err := c.QueryRowContext(ctx, selectVer, m, u).Scan(&version); err != nil {
		return 0, err
	}
	if _, err := c.ExecContext(ctx, insertEvent, m, u, version, status); err != nil {
		return 0, err
	}
	if version%cullEvery == 0 {
		if _, err := c.ExecContext(ctx, cullEvents, m, u, version-eventsKept); err != nil {
			return 0, err
		}
	}
	return version, nil
}

// attempt runs one try of a transaction on a pooled connection of `model`'s database:
// BEGIN, body, COMMIT.
func (r *run) attempt(ctx context.Context, model int, body func(c *sql.Conn) error) error {
	c, err := r.dbs[model].Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	err = body(c)
	if err == nil {
		_, err = c.ExecContext(ctx, "COMMIT")
	}
	if err != nil {
		// SQLite may have rolled back already; a failed ROLLBACK changes nothing.
		_, _ = c.ExecContext(ctx, "ROLLBACK")
	}
	return err
}

// txn is Juju's runner: the gate around each attempt, retryable errors backed off
// outside it, at most maxAttempts attempts and no retry begun past maxDuration (juju/retry's
// Attempts and MaxDuration). Every transaction goes through it: the step workers', the
// change streams' polls and their watchers' reads alike, as every Juju transaction goes
// through its database's runner.
func (r *run) txn(ctx context.Context, w *worker, f *figures, model int, body func(c *sql.Conn) error) error {
	var lastErr error
	start := time.Now()
	for attempt := 0; attempt < maxAttempts; attempt++ {
		t0 := time.Now()
		if r.gate != nil {
			r.gate <- struct{}{}
		}
		t1 := time.Now()
		err := r.attempt(ctx, model, body)
		t2 := time.Now()
		if r.gate != nil {
			<-r.gate
		}
		f.GateWaitNs += int64(t1.Sub(t0))
		f.GateHeldNs += int64(t2.Sub(t1))
		if err == nil {
			return nil
		}
		lastErr = err
		if !isRetryable(err) {
			return err
		}
		f.BusyErrors++
		if attempt+1 == maxAttempts {
			break
		}
		d := r.backoff(attempt, w.rng)
		if time.Since(start)+d > maxDuration {
			return fmt.Errorf("gave up after %v: %w", maxDuration, lastErr)
		}
		f.Retries++
		s := time.Now()
		time.Sleep(d)
		f.BackoffNs += int64(time.Since(s))
	}
	return fmt.Errorf("gave up after %d busy attempts: %w", maxAttempts, lastErr)
}

// step runs one transaction of the mix on `model`'s database, a read or a write of a
// unit drawn at random, and counts it in the window when it started inside it.
func (r *run) step(ctx context.Context, w *worker, model int) {
	phase := r.counting.Load()
	var f figures
	unit := w.rng.Intn(r.units)
	write := w.rng.Intn(100) >= r.readPct
	status := ""
	if write {
		w.serial++
		status = fmt.Sprintf("g%d-w%d", w.index, w.serial)
	}
	m, u := modelName(model), unitName(unit)
	var res readResult
	var version int64
	start := time.Now()
	err := r.txn(ctx, w, &f, model, func(c *sql.Conn) (err error) {
		if write {
			version, err = r.writeTxn(ctx, c, m, u, status)
		} else {
			res, err = r.readTxn(ctx, c, m, u)
		}
		return err
	})
	f.LatencySum += int64(time.Since(start))
	f.Txns++
	switch {
	case err != nil:
		f.Errors++
		w.noteError(err)
		if write && len(w.failed) < failedKept {
			w.failed = append(w.failed, status)
		}
	case write:
		f.Writes++
		k := key{model, unit}
		c := w.committed[k]
		if c == nil {
			c = &committed{Model: model, Unit: unit}
			w.committed[k] = c
		}
		c.Count++
		if version > c.NewestVersion {
			c.NewestVersion = version
			c.NewestStatus = status
		}
	default:
		f.Reads++
		w.checkRead(res, r.units)
	}
	// A transaction counts when it started inside the window, whenever it ends.
	if phase == 1 {
		w.fig.add(f)
	}
}

func (w *worker) noteError(err error) {
	if w.firstError == "" {
		w.firstError = err.Error()
	}
}

// checkRead counts a read that saw part of a write: a unit whose version is not its
// newest event's, or a model missing units.
func (w *worker) checkRead(res readResult, units int) {
	if res.version != res.newest || res.count != int64(units) {
		w.partialReads++
	}
}

// closedLoop is -load closed: transactions back to back on models drawn at random, no
// pause between them.
func (r *run) closedLoop(ctx context.Context, w *worker, models int) {
	for r.counting.Load() != 2 {
		r.step(ctx, w, w.rng.Intn(models))
	}
}

// sleep waits `d`, or until the run closes; false when it closed.
func (r *run) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.closed:
		return false
	}
}

// paced is a step worker of -load seed: one transaction on its own model every
// `interval`, starting at a random point of the first. A step that falls behind (the
// previous one ran past its time) starts at once and the pace resumes from it: no burst
// to catch up, as a worker that ticks does not queue its missed ticks.
func (r *run) paced(ctx context.Context, w *worker, model int, interval time.Duration) {
	next := time.Now().Add(time.Duration(w.rng.Int63n(int64(interval) + 1)))
	for r.counting.Load() != 2 {
		if wait := time.Until(next); wait > 0 {
			if !r.sleep(wait) {
				return
			}
		} else if r.counting.Load() == 1 {
			w.fig.LateSteps++
		}
		r.step(ctx, w, model)
		next = next.Add(interval)
		if now := time.Now(); next.Before(now) {
			next = now
		}
	}
}

// streamBackoff is Juju's change stream's wait after `attempt` polls in a row found
// nothing (internal/changestream/stream: retry.ExpBackoff(100ms, 10s, 1.4, false)):
// 100 ms x 1.4^attempt, capped at 10 s, no jitter.
func streamBackoff(attempt int) time.Duration {
	d := float64(streamFirst) * math.Pow(streamFactor, float64(attempt))
	return time.Duration(math.Min(d, float64(streamCap)))
}

// stream is `model`'s change stream, as Juju's: a transaction reading the events past
// the last one seen (one row per changed unit, its newest event), then for each changed
// unit a watcher's read transaction of that unit; when nothing changed it backs off
// (streamBackoff, the attempt count reset by the next change).
func (r *run) stream(ctx context.Context, w *worker, model int) {
	m := modelName(model)
	var upper int64
	var units []int
	read := func(c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, selectChanges, m, upper)
		if err != nil {
			return err
		}
		defer rows.Close()
		found := units[:0]
		newest := upper
		for rows.Next() {
			var id int64
			var unit string
			if err := rows.Scan(&id, &unit); err != nil {
				return err
			}
			var u int
			if _, err := fmt.Sscanf(unit, "unit/%d", &u); err != nil {
				return fmt.Errorf("change of unit %q: %w", unit, err)
			}
			found = append(found, u)
			if id > newest {
				newest = id
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		units, upper = found, newest
		return nil
	}
	// The stream starts at the newest event, as Juju's starts at its watermark.
	if err := r.txn(ctx, w, &figures{}, model, func(c *sql.Conn) error {
		var newest sql.NullInt64
		err := c.QueryRowContext(ctx, selectNewestID, m).Scan(&newest)
		upper = newest.Int64
		return err
	}); err != nil {
		w.noteError(err)
	}
	attempt := 0
	for r.counting.Load() != 2 {
		phase := r.counting.Load()
		var f figures
		start := time.Now()
		err := r.txn(ctx, w, &f, model, read)
		f.LatencySum += int64(time.Since(start))
		f.Txns++
		f.Polls++
		if err != nil {
			f.Errors++
			w.noteError(err)
		} else {
			f.Reads++
		}
		if phase == 1 {
			w.fig.add(f)
		}
		if err != nil || len(units) == 0 {
			attempt++
			if !r.sleep(streamBackoff(attempt)) {
				return
			}
			continue
		}
		attempt = 0
		for _, u := range units {
			phase := r.counting.Load()
			var f figures
			var res readResult
			start := time.Now()
			err := r.txn(ctx, w, &f, model, func(c *sql.Conn) (err error) {
				res, err = r.readTxn(ctx, c, m, unitName(u))
				return err
			})
			f.LatencySum += int64(time.Since(start))
			f.Txns++
			f.WatcherReads++
			if err != nil {
				f.Errors++
				w.noteError(err)
			} else {
				f.Reads++
				w.checkRead(res, r.units)
			}
			if phase == 1 {
				w.fig.add(f)
			}
		}
	}
}

type output struct {
	figures
	WindowS        float64     `json:"window_s"`
	Connects       int64       `json:"connects"`
	PartialReads   int64       `json:"partial_reads"`
	Committed      []committed `json:"committed"`
	Failed         []string    `json:"failed"`
	FirstError     string      `json:"first_error,omitempty"`
	GoVersion      string      `json:"go_version"`
	Threads        int         `json:"threads"`
	Slots          int         `json:"slots"`
	MaxOpen        int         `json:"max_open"`
	MaxIdle        int         `json:"max_idle"`
	ReadPct        int         `json:"read_pct"`
	ModelDatabases int         `json:"model_databases"`
	Load           string      `json:"load"`
	Rate           float64     `json:"rate"`
}

// opened is how many connections the pools have opened so far: the ones open now and
// every one closed since.
func opened(dbs []*sql.DB) int64 {
	var n int64
	for _, db := range dbs {
		s := db.Stats()
		n += int64(s.OpenConnections) + s.MaxIdleClosed + s.MaxIdleTimeClosed + s.MaxLifetimeClosed
	}
	return n
}

func main() {
	address := flag.String("address", "", "the node's address (host:port, or @abstract)")
	threads := flag.Int("threads", 1, "goroutines running transactions")
	slots := flag.Int("slots", 0, "the gate's slots K (0: no semaphore)")
	readPct := flag.Int("read-pct", 80, "percent of transactions that only read")
	models := flag.Int("models", 1, "model databases (controller, model-0001, ...)")
	units := flag.Int("units", 10, "units per model")
	maxOpen := flag.Int("max-open", 64, "database/sql SetMaxOpenConns per database")
	maxIdle := flag.Int("max-idle", 2, "database/sql SetMaxIdleConns per database")
	warmup := flag.Duration("warmup", 200*time.Millisecond, "warm-up, not counted")
	duration := flag.Duration("duration", time.Second, "the counted window")
	retry := flag.String("retry", "juju", "the retry policy: juju (retry.ExpBackoff(1ms, 100ms, 0.8, true): every 1 ms) or doubling (1 ms doubling to 100 ms, jittered)")
	load := flag.String("load", "closed", "closed: -threads goroutines running transactions back to back on models drawn at random; seed: a controller's shape, per model database a change stream (Juju's polling and backoff, a watcher's read per change) and -threads step workers spread over the models, offering -rate transactions/s in all")
	rate := flag.Float64("rate", 0, "-load seed: the step workers' transactions/s in all (each runs one every -threads/-rate seconds)")
	flag.Parse()
	fail := func(format string, a ...interface{}) {
		fmt.Fprintf(os.Stderr, "sqlmix-go-client: "+format+"\n", a...)
		os.Exit(2)
	}
	if *address == "" || *threads < 1 || *models < 1 || *units < 1 || *maxOpen < 1 || *slots < 0 || *readPct < 0 || *readPct > 100 {
		fail("bad flags: -address is required; -threads, -models, -units, -max-open at least 1; -slots 0 or more; -read-pct 0-100")
	}
	if *load != "closed" && *load != "seed" {
		fail("bad flag -load %q: accepted closed, seed", *load)
	}
	if *load == "seed" && !(*rate > 0) {
		fail("bad flag -rate %v: -load seed needs a rate above 0 transactions/s", *rate)
	}
	store := client.NewInmemNodeStore()
	if err := store.Set(context.Background(), []client.NodeInfo{{ID: 1, Address: *address}}); err != nil {
		fail("node store: %v", err)
	}
	// A node that cannot be reached fails the run in seconds instead of being retried
	// for ever (go-dqlite's default).
	drv, err := driver.New(store,
		driver.WithLogFunc(func(client.LogLevel, string, ...interface{}) {}),
		driver.WithConnectionTimeout(10*time.Second))
	if err != nil {
		fail("go-dqlite driver: %v", err)
	}
	sql.Register("dqlite", drv)
	r := &run{units: *units, readPct: *readPct, closed: make(chan struct{})}
	switch *retry {
	case "juju":
		r.backoff = jujuBackoff
	case "doubling":
		r.backoff = doublingBackoff
	default:
		fail("bad flag -retry %q: accepted juju, doubling", *retry)
	}
	if *slots > 0 {
		r.gate = make(chan struct{}, *slots)
	}
	for m := 0; m < *models; m++ {
		db, err := sql.Open("dqlite", modelName(m))
		if err != nil {
			fail("opening %s: %v", modelName(m), err)
		}
		db.SetMaxOpenConns(*maxOpen)
		db.SetMaxIdleConns(*maxIdle)
		if err := db.Ping(); err != nil {
			fail("connecting to %s at %s: %v", modelName(m), *address, err)
		}
		r.dbs = append(r.dbs, db)
	}
	ctx := context.Background()
	var workers []*worker
	var wg sync.WaitGroup
	start := func(body func(w *worker)) {
		w := &worker{
			index:     len(workers),
			rng:       rand.New(rand.NewSource(int64(0x5a1 + len(workers)))),
			committed: map[key]*committed{},
		}
		workers = append(workers, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(w)
		}()
	}
	for i := 0; i < *threads; i++ {
		if *load == "closed" {
			start(func(w *worker) { r.closedLoop(ctx, w, *models) })
			continue
		}
		model := i % *models
		interval := time.Duration(float64(*threads) / *rate * float64(time.Second))
		start(func(w *worker) { r.paced(ctx, w, model, interval) })
	}
	if *load == "seed" {
		for m := 0; m < *models; m++ {
			model := m
			start(func(w *worker) { r.stream(ctx, w, model) })
		}
	}
	time.Sleep(*warmup)
	connectsBefore := opened(r.dbs)
	open := time.Now()
	r.counting.Store(1)
	time.Sleep(*duration)
	r.counting.Store(2)
	close(r.closed)
	window := time.Since(open)
	connects := opened(r.dbs) - connectsBefore
	wg.Wait()
	out := output{
		WindowS:        window.Seconds(),
		Connects:       connects,
		GoVersion:      strings.TrimPrefix(runtime.Version(), "go"),
		Threads:        *threads,
		Slots:          *slots,
		MaxOpen:        *maxOpen,
		MaxIdle:        *maxIdle,
		ReadPct:        *readPct,
		ModelDatabases: *models,
		Load:           *load,
		Rate:           *rate,
		Committed:      []committed{},
		Failed:         []string{},
	}
	for _, w := range workers {
		out.figures.add(w.fig)
		out.PartialReads += w.partialReads
		for _, c := range w.committed {
			out.Committed = append(out.Committed, *c)
		}
		out.Failed = append(out.Failed, w.failed...)
		if out.FirstError == "" {
			out.FirstError = w.firstError
		}
	}
	for _, db := range r.dbs {
		db.Close()
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("writing the figures: %v", err)
	}
}
