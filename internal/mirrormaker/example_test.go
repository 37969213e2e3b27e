package mirrormaker_test

import (
	"fmt"

	"github.com/kafka-catchup/catchup/internal/mirrormaker"
)

func ExampleConvert() {
	consumer := mirrormaker.File{Name: "east-consumer.properties", Data: []byte(`
# the old consumer
zookeeper.connect = zk-1:2181
bootstrap.servers = kafka-e1:9092
group.id = mirror
auto.offset.reset = smallest
`)}
	producer := mirrormaker.File{Name: "dr-producer.properties", Data: []byte(`
bootstrap.servers = dr-1:9092
acks = 0
`)}
	_, err := mirrormaker.Convert([]mirrormaker.File{consumer}, producer, mirrormaker.Flags{Whitelist: "orders,payments"})
	fmt.Println(err != nil)

	m, err := mirrormaker.Convert([]mirrormaker.File{consumer}, producer,
		mirrormaker.Flags{Whitelist: "orders,payments", AllowDataLoss: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range m.Notices[:4] {
		fmt.Println(n.Line, n.Key, n.Kind)
	}
	p := m.File.Pipelines[0]
	fmt.Println(p.Name, p.Source.Name, p.Source.Brokers, "→", p.Target.Name, p.Target.Brokers, p.Producer.Acks)
	fmt.Println(p.Topics.Match("orders"), p.Topics.Match("orders-archive"))
	// Output:
	// true
	// 3 zookeeper.connect obsolete
	// 4 bootstrap.servers mapped
	// 6 auto.offset.reset mapped
	// 5 group.id mapped
	// mirror east [kafka-e1:9092] → dr [dr-1:9092] none
	// true false
}
