package config_test

import (
	"fmt"

	"github.com/kafka-catchup/catchup/internal/config"
)

func ExampleParse() {
	f, err := config.Parse([]byte(`
pipelines:
  - name: orders-dr
    source: {brokers: ["onprem-1:9092"]}
    target: {brokers: ["b-1.msk.example.com:9092"]}
    topics:
      include: [orders, 'payments\..*']
      exclude: ['payments\.test\..*']
    producer: {compression: zstd}
`), "pipelines.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := f.Pipeline("orders-dr")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("store:", f.Store)
	fmt.Println("acks:", p.Producer.Acks, "compression:", p.Producer.Compression)
	for _, topic := range []string{"orders", "payments.eu", "payments.test.eu", "__consumer_offsets"} {
		fmt.Printf("copy %s: %v\n", topic, p.Topics.Match(topic))
	}
	// Output:
	// store: file://.catchup
	// acks: all compression: zstd
	// copy orders: true
	// copy payments.eu: true
	// copy payments.test.eu: false
	// copy __consumer_offsets: false
}

func ExampleParse_errors() {
	_, err := config.Parse([]byte(`
pipelines:
  - name: orders-dr
    source: {brokers: ["onprem-1:9092"]}
    target: {brokers: ["b-1.msk.example.com:9092"]}
    topics: {include: ['(?!test).*']}
    producer:
      acks: none
      max_recrds: 100
`), "pipelines.yaml")
	fmt.Println(err)
	// Output:
	// pipelines.yaml:6:24: pipelines[0] (orders-dr): topics.include[0]: "(?!test).*" uses the negative lookahead "(?!", Java regex syntax that Go's RE2 engine does not support; rewrite it without lookaround: select with include and drop the unwanted topics with exclude, which always wins (for "(?!test).*" write include ".*" and exclude "test.*")
	// pipelines.yaml:8:7: pipelines[0] (orders-dr): producer.acks: "none" can lose records silently: the producer never learns whether a write arrived, yet the checkpoint moves past it; use acks: all, or set allow_data_loss: true to accept the loss
	// pipelines.yaml:9:7: pipelines[0] (orders-dr): producer: unknown key "max_recrds" (did you mean "max_records"? it belongs in window)
}
