package dynamostore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// Attribute names of an item; doc.go describes each.
const (
	attrPipeline     = "pipeline"
	attrPartition    = "partition"
	attrNext         = "next"
	attrExists       = "exists"
	attrTargetEnd    = "target_end"
	attrOwner        = "owner"
	attrEpoch        = "epoch"
	attrLeaseExpires = "lease_expires"
	attrRecords      = "records"
	attrBytes        = "bytes"
	attrCommits      = "commits"
	attrLastError    = "last_error"
	attrGaps         = "gaps"
	attrUpdated      = "updated"
	attrLastOp       = "last_op"
	attrVerification = "verification"
	attrStart        = "start"

	gapFrom = "from"
	gapTo   = "to"
	gapAt   = "at"

	verAt         = "at"
	verFrom       = "from"
	verTo         = "to"
	verSource     = "source"
	verMatched    = "matched"
	verMissing    = "missing"
	verDuplicated = "duplicated"
	verDiffering  = "differing"
	verOutOfOrder = "out_of_order"
	verFirst      = "first"

	// Added with loop-skipped counting; an item without them reads as zero.
	verLoopSkipped = "loop_skipped"
	verReplaced    = "replaced"
	verForeign     = "foreign"
	verOutside     = "outside"
	verTarget      = "target"
	verBehind      = "behind"
	verStuck       = "stuck"
)

// exprNames maps "#name" to name for every attribute, so that expressions
// never trip over DynamoDB's reserved words (next, owner, exists, bytes...).
var exprNames = func() map[string]string {
	m := map[string]string{}
	for _, a := range []string{
		attrPipeline, attrPartition, attrNext, attrExists, attrTargetEnd, attrOwner,
		attrEpoch, attrLeaseExpires, attrRecords, attrBytes, attrCommits, attrLastError,
		attrGaps, attrUpdated, attrLastOp, attrVerification, attrStart,
	} {
		m["#"+a] = a
	}
	return m
}()

// names returns the expression attribute names used by expr: DynamoDB rejects
// names that an expression does not use.
func names(expr ...string) map[string]string {
	all := strings.Join(expr, " ")
	m := map[string]string{}
	for k, v := range exprNames {
		if containsName(all, k) {
			m[k] = v
		}
	}
	return m
}

// containsName reports whether name ("#next") occurs in expr as a whole word.
func containsName(expr, name string) bool {
	for i := 0; ; {
		j := strings.Index(expr[i:], name)
		if j < 0 {
			return false
		}
		end := i + j + len(name)
		if end == len(expr) || !isNameChar(expr[end]) {
			return true
		}
		i = end
	}
}

func isNameChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// partitionWidth is the number of digits of the largest int32.
const partitionWidth = 10

// sortKey encodes p as "topic#0000000012": see doc.go for why it sorts right.
func sortKey(p catchup.Partition) (string, error) {
	if p.Partition < 0 {
		return "", fmt.Errorf("partition %s: negative partition number", p)
	}
	return fmt.Sprintf("%s#%0*d", p.Topic, partitionWidth, p.Partition), nil
}

// parseSortKey is the inverse of sortKey.
func parseSortKey(s string) (catchup.Partition, error) {
	i := strings.LastIndexByte(s, '#')
	if i < 0 || len(s)-i-1 != partitionWidth {
		return catchup.Partition{}, fmt.Errorf("sort key %q is not topic#%0*d", s, partitionWidth, 0)
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || n < 0 {
		return catchup.Partition{}, fmt.Errorf("sort key %q: bad partition number", s)
	}
	return catchup.Partition{Topic: s[:i], Partition: int32(n)}, nil
}

func key(pipeline, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPipeline:  &types.AttributeValueMemberS{Value: pipeline},
		attrPartition: &types.AttributeValueMemberS{Value: sk},
	}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func millis(t time.Time) types.AttributeValue { return num(t.UnixMilli()) }

// fromMillis is the time stored as unix milliseconds, in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// truncMillis is t as the store keeps it.
func truncMillis(t time.Time) time.Time { return fromMillis(t.UnixMilli()) }

// errItem wraps every problem with the shape of a stored item.
var errItem = errors.New("malformed item")

func getNum(item map[string]types.AttributeValue, name string, absent int64) (int64, error) {
	v, ok := item[name]
	if !ok {
		return absent, nil
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("%w: %s is %T, not a number", errItem, name, v)
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", errItem, name, err)
	}
	return i, nil
}

func getStr(item map[string]types.AttributeValue, name string) (string, error) {
	v, ok := item[name]
	if !ok {
		return "", nil
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("%w: %s is %T, not a string", errItem, name, v)
	}
	return s.Value, nil
}

func getBool(item map[string]types.AttributeValue, name string) (bool, error) {
	v, ok := item[name]
	if !ok {
		return false, nil
	}
	b, ok := v.(*types.AttributeValueMemberBOOL)
	if !ok {
		return false, fmt.Errorf("%w: %s is %T, not a boolean", errItem, name, v)
	}
	return b.Value, nil
}

func getTime(item map[string]types.AttributeValue, name string) (time.Time, error) {
	if _, ok := item[name]; !ok {
		return time.Time{}, nil
	}
	ms, err := getNum(item, name, 0)
	if err != nil {
		return time.Time{}, err
	}
	return fromMillis(ms), nil
}

// gapValue is one element of the gaps list.
func gapValue(g checkpoint.Gap) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		gapFrom: num(g.From),
		gapTo:   num(g.To),
		gapAt:   millis(g.At),
	}}
}

func getGaps(item map[string]types.AttributeValue) ([]checkpoint.Gap, error) {
	v, ok := item[attrGaps]
	if !ok {
		return nil, nil
	}
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %T, not a list", errItem, attrGaps, v)
	}
	var gaps []checkpoint.Gap
	for i, e := range l.Value {
		m, ok := e.(*types.AttributeValueMemberM)
		if !ok {
			return nil, fmt.Errorf("%w: %s[%d] is %T, not a map", errItem, attrGaps, i, e)
		}
		var g checkpoint.Gap
		var err1, err2, err3 error
		g.From, err1 = getNum(m.Value, gapFrom, 0)
		g.To, err2 = getNum(m.Value, gapTo, 0)
		g.At, err3 = getTime(m.Value, gapAt)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", attrGaps, i, err)
		}
		gaps = append(gaps, g)
	}
	return gaps, nil
}

// verificationValue is the verification map. An empty First or Stuck is
// left out: no write stores an empty string.
func verificationValue(v checkpoint.Verification) types.AttributeValue {
	m := map[string]types.AttributeValue{
		verAt:         millis(v.At),
		verFrom:       num(v.From),
		verTo:         num(v.To),
		verSource:     num(v.Source),
		verMatched:    num(v.Matched),
		verMissing:    num(v.Missing),
		verDuplicated: num(v.Duplicated),
		verDiffering:  num(v.Differing),
		verOutOfOrder: num(v.OutOfOrder),

		verLoopSkipped: num(v.LoopSkipped),
		verReplaced:    num(v.Replaced),
		verForeign:     num(v.Foreign),
		verOutside:     num(v.Outside),
		verTarget:      num(v.Target),
		verBehind:      num(v.Behind),
	}
	if v.First != "" {
		m[verFirst] = str(v.First)
	}
	if v.Stuck != "" {
		m[verStuck] = str(v.Stuck)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// getVerification reads the verification map; nil if the item has none.
func getVerification(item map[string]types.AttributeValue) (*checkpoint.Verification, error) {
	av, ok := item[attrVerification]
	if !ok {
		return nil, nil
	}
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %T, not a map", errItem, attrVerification, av)
	}
	var v checkpoint.Verification
	var errs [17]error
	v.At, errs[0] = getTime(m.Value, verAt)
	v.From, errs[1] = getNum(m.Value, verFrom, 0)
	v.To, errs[2] = getNum(m.Value, verTo, 0)
	v.Source, errs[3] = getNum(m.Value, verSource, 0)
	v.Matched, errs[4] = getNum(m.Value, verMatched, 0)
	v.Missing, errs[5] = getNum(m.Value, verMissing, 0)
	v.Duplicated, errs[6] = getNum(m.Value, verDuplicated, 0)
	v.Differing, errs[7] = getNum(m.Value, verDiffering, 0)
	v.OutOfOrder, errs[8] = getNum(m.Value, verOutOfOrder, 0)
	v.First, errs[9] = getStr(m.Value, verFirst)
	v.LoopSkipped, errs[10] = getNum(m.Value, verLoopSkipped, 0)
	v.Replaced, errs[11] = getNum(m.Value, verReplaced, 0)
	v.Foreign, errs[12] = getNum(m.Value, verForeign, 0)
	v.Outside, errs[13] = getNum(m.Value, verOutside, 0)
	v.Target, errs[14] = getNum(m.Value, verTarget, 0)
	v.Behind, errs[15] = getNum(m.Value, verBehind, 0)
	v.Stuck, errs[16] = getStr(m.Value, verStuck)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("%s: %w", attrVerification, err)
	}
	return &v, nil
}

// decode turns a stored item into a Checkpoint.
func decode(item map[string]types.AttributeValue) (checkpoint.Checkpoint, error) {
	var c checkpoint.Checkpoint
	sk, err := getStr(item, attrPartition)
	if err != nil {
		return c, err
	}
	if c.Partition, err = parseSortKey(sk); err != nil {
		return c, fmt.Errorf("%w: %w", errItem, err)
	}
	var errs [14]error
	c.Exists, errs[0] = getBool(item, attrExists)
	c.Next, errs[1] = getNum(item, attrNext, 0)
	c.TargetEnd, errs[2] = getNum(item, attrTargetEnd, -1)
	c.Records, errs[3] = getNum(item, attrRecords, 0)
	c.Bytes, errs[4] = getNum(item, attrBytes, 0)
	c.Commits, errs[5] = getNum(item, attrCommits, 0)
	c.Owner, errs[6] = getStr(item, attrOwner)
	c.Epoch, errs[7] = getNum(item, attrEpoch, 0)
	c.Expires, errs[8] = getTime(item, attrLeaseExpires)
	c.LastError, errs[9] = getStr(item, attrLastError)
	c.Gaps, errs[10] = getGaps(item)
	c.Updated, errs[11] = getTime(item, attrUpdated)
	c.LastVerification, errs[12] = getVerification(item)
	if _, ok := item[attrStart]; ok {
		var start int64
		start, errs[13] = getNum(item, attrStart, 0)
		c.Start = &start
	}
	if err := errors.Join(errs[:]...); err != nil {
		return c, fmt.Errorf("item %s: %w", sk, err)
	}
	return c, nil
}
