// A consumer this project did not write: the Apache Kafka Java client reading a whole topic at
// the isolation level it is given, as an application with that `isolation.level` would. No
// group: every partition is assigned and read from its start up to the end offsets taken at
// the start (for read_committed those are the last stable offsets). Arguments: bootstrap
// servers, topic, isolation level (read_committed | read_uncommitted), header names. Prints one
// line per data record, tab separated: partition, offset, then the last value of each named
// header as text (`-` when absent).
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ForeignConsumer {
  public static void main(String[] args) {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("isolation.level", args[2]);
    props.put("enable.auto.commit", "false");
    props.put("key.deserializer", ByteArrayDeserializer.class.getName());
    props.put("value.deserializer", ByteArrayDeserializer.class.getName());
    StringBuilder out = new StringBuilder();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(args[1], Duration.ofSeconds(30)).stream()
              .map(p -> new TopicPartition(p.topic(), p.partition()))
              .collect(Collectors.toList());
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      long deadline = System.currentTimeMillis() + 60_000;
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("did not reach the end offsets " + ends);
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          out.append(r.partition()).append('\t').append(r.offset());
          for (int i = 3; i < args.length; i++) {
            Header h = r.headers().lastHeader(args[i]);
            out.append('\t').append(h == null || h.value() == null ? "-" : new String(h.value(), StandardCharsets.UTF_8));
          }
          out.append('\n');
        }
      }
    }
    System.out.print(out);
  }
}
