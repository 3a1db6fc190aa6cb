// A producer this project did not write: the Apache Kafka Java client, to send records kafkajs
// cannot (null header values, the Java defaults). Reads one record per stdin line, tab separated:
//   partition  key|-  value|-  timestampMs|-  header...
// where a header is `name=text`, `name~hex` (raw bytes) or `name` alone (a null value), and `-`
// means null (a timestamp `-` lets the client stamp it). Sends them in order, flushes, prints
// the count. Arguments: bootstrap servers, topic, optionally max.request.size, acks (default
// all; `1` is the leader-only producer that still writes while a topic is below min.insync) and
// compression.type (default none).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ForeignProducer {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("acks", args.length > 3 ? args[3] : "all");
    // Idempotence needs acks=all; a leader-only producer sends without it.
    props.put("enable.idempotence", args.length > 3 && !args[3].equals("all") ? "false" : "true");
    props.put("linger.ms", "5");
    props.put("max.request.size", args.length > 2 ? args[2] : "4194304");
    props.put("compression.type", args.length > 4 ? args[4] : "none");
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    int sent = 0;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", -1);
        List<Header> headers = new ArrayList<>();
        for (int i = 4; i < f.length; i++) {
          int eq = f[i].indexOf('='), hex = f[i].indexOf('~');
          if (eq > 0 && (hex < 0 || eq < hex))
            headers.add(new RecordHeader(f[i].substring(0, eq), bytes(f[i].substring(eq + 1))));
          else if (hex > 0)
            headers.add(new RecordHeader(f[i].substring(0, hex), HexFormat.of().parseHex(f[i].substring(hex + 1))));
          else headers.add(new RecordHeader(f[i], (byte[]) null));
        }
        Long timestamp = f[3].equals("-") ? null : Long.valueOf(f[3]);
        producer.send(
            new ProducerRecord<>(args[1], Integer.valueOf(f[0]), timestamp, nullable(f[1]), nullable(f[2]), headers),
            (meta, err) -> {
              if (err != null) {
                System.err.println("send failed: " + err);
                System.exit(2);
              }
            });
        sent++;
      }
      producer.flush();
    }
    System.out.println(sent);
  }


  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] nullable(String s) {
    return s.equals("-") ? null : bytes(s);
  }
}
