// Transactional producers this project did not write: the Apache Kafka Java client, driven one
// command at a time so a test lays out interleaved transactions offset by offset. Arguments:
// bootstrap servers, topic, transactional id prefix. Reads one command per stdin line, tab
// separated, and answers each with one stdout line once it is done (`ok ...`):
//   begin <producer>                      beginTransaction (the producer is created on first use)
//   send <producer> <partition> key|- value|- header...   sends and flushes; answers `ok <offset>`
//   commit <producer> | abort <producer>  commitTransaction / abortTransaction
// where <producer> names a transactional producer (transactional.id = prefix-name), or is `-`
// for a plain idempotent producer (no transaction). A header is `name=text`. Any failure is
// printed to stderr and exits 2.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ForeignTransactions {
  private static final Map<String, KafkaProducer<byte[], byte[]>> producers = new HashMap<>();

  public static void main(String[] args) throws Exception {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", -1);
        try {
          KafkaProducer<byte[], byte[]> p = producer(args, f[1]);
          switch (f[0]) {
            case "begin" -> {
              p.beginTransaction();
              System.out.println("ok");
            }
            case "commit" -> {
              p.commitTransaction();
              System.out.println("ok");
            }
            case "abort" -> {
              p.abortTransaction();
              System.out.println("ok");
            }
            case "send" -> {
              List<Header> headers = new ArrayList<>();
              for (int i = 5; i < f.length; i++) {
                int eq = f[i].indexOf('=');
                headers.add(new RecordHeader(f[i].substring(0, eq), bytes(f[i].substring(eq + 1))));
              }
              var record =
                  new ProducerRecord<>(args[1], Integer.valueOf(f[2]), null, nullable(f[3]), nullable(f[4]), headers);
              var sent = p.send(record);
              p.flush(); // one batch per record: the layout is exactly the order of the commands
              RecordMetadata meta = sent.get();
              System.out.println("ok " + meta.offset());
            }
            default -> throw new IllegalArgumentException("unknown command " + f[0]);
          }
          System.out.flush();
        } catch (Exception e) {
          System.err.println("command failed: " + line.split("\t")[0] + ": " + e);
          System.exit(2);
        }
      }
    } finally {
      for (KafkaProducer<byte[], byte[]> p : producers.values()) p.close();
    }
  }

  private static KafkaProducer<byte[], byte[]> producer(String[] args, String name) {
    return producers.computeIfAbsent(
        name,
        n -> {
          Properties props = new Properties();
          props.put("bootstrap.servers", args[0]);
          props.put("acks", "all");
          props.put("enable.idempotence", "true");
          props.put("linger.ms", "0");
          props.put("max.request.size", "4194304");
          props.put("key.serializer", ByteArraySerializer.class.getName());
          props.put("value.serializer", ByteArraySerializer.class.getName());
          if (!n.equals("-")) props.put("transactional.id", args[2] + "-" + n);
          KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props);
          if (!n.equals("-")) p.initTransactions();
          return p;
        });
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] nullable(String s) {
    return s.equals("-") ? null : bytes(s);
  }
}
