#include "eval/protocol.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

using nlohmann::json;

TEST(LineSplitterTest, YieldsCompleteLinesAcrossChunks) {
  LineSplitter s;
  std::string line;
  ASSERT_TRUE(s.Append("{\"a\":").ok());
  EXPECT_FALSE(s.Next(&line));
  ASSERT_TRUE(s.Append("1}\n{\"b\"").ok());
  ASSERT_TRUE(s.Next(&line));
  EXPECT_EQ(line, "{\"a\":1}");
  EXPECT_FALSE(s.Next(&line));
  EXPECT_EQ(s.pending_bytes(), 4u);
  ASSERT_TRUE(s.Append(":2}\r\n\nlast\n").ok());
  ASSERT_TRUE(s.Next(&line));
  EXPECT_EQ(line, "{\"b\":2}");
  ASSERT_TRUE(s.Next(&line));
  EXPECT_EQ(line, "");
  ASSERT_TRUE(s.Next(&line));
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(s.Next(&line));
  EXPECT_EQ(s.pending_bytes(), 0u);
}

TEST(LineSplitterTest, ManySmallLinesStayCompact) {
  LineSplitter s;
  std::string line;
  for (int i = 0; i < 100000; ++i) {
    ASSERT_TRUE(s.Append(std::to_string(i) + "\n").ok());
    ASSERT_TRUE(s.Next(&line));
    ASSERT_EQ(line, std::to_string(i));
  }
}

TEST(LineSplitterTest, RejectsOverlongLines) {
  LineSplitter unterminated(8);
  EXPECT_TRUE(unterminated.Append("12345678").ok());
  Status st = unterminated.Append("9");
  EXPECT_EQ(st.code(), Status::Code::kProtocol);
  EXPECT_NE(st.message().find("longer than 8 bytes"), std::string::npos);

  LineSplitter complete(8);
  EXPECT_FALSE(complete.Append("ok\n123456789\nok\n").ok());

  LineSplitter exact(8);
  EXPECT_TRUE(exact.Append("12345678\n12345678").ok());
}

TEST(ProtocolTest, EncodesEvalRequest) {
  EvalRequest r;
  r.problem_path = "p.py";
  r.problem_source = "x = 1\n";
  r.candidate_path = "c.py";
  r.candidate_source = "bad \xff byte";
  r.backend = "triton";
  r.trials = 3;
  r.tolerance = "strict";
  r.seed = 7;
  r.timing = false;
  std::string line = EncodeEvalRequest(r, "17");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  json j = json::parse(line);
  EXPECT_EQ(j["type"], "eval");
  EXPECT_EQ(j["id"], "17");
  EXPECT_EQ(j["backend"], "triton");
  EXPECT_EQ(j["trials"], 3);
  EXPECT_EQ(j["tolerance"], "strict");
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["timing"], false);
  EXPECT_EQ(j["problem"]["path"], "p.py");
  EXPECT_EQ(j["problem"]["source"], "x = 1\n");
  EXPECT_EQ(j["candidate"]["source"], "bad \xEF\xBF\xBD byte");
  EXPECT_FALSE(j.contains("baseline"));  // only when asked for
  r.timing = true;
  r.baseline_path = "p3.py";
  r.baseline_source = "class ModelNew: pass\n";
  j = json::parse(EncodeEvalRequest(r, "18"));
  EXPECT_EQ(j["baseline"], json({{"path", "p3.py"}, {"source", "class ModelNew: pass\n"}}));
}

TEST(ProtocolTest, EncodesControlMessages) {
  EXPECT_EQ(json::parse(EncodeLeaseGranted("3")), json({{"type", "lease_granted"}, {"id", "3"}}));
  EXPECT_EQ(EncodeShutdown(), "{\"type\":\"shutdown\"}\n");
}

TEST(ProtocolTest, DecodesWorkerMessages) {
  Result<WorkerMessage> hello =
      DecodeWorkerMessage(R"({"type":"hello","protocol":1,"pid":12,"backends":["cpu"]})");
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(hello->type, WorkerMessage::Type::kHello);
  EXPECT_EQ(hello->protocol, 1);
  EXPECT_EQ(hello->body["pid"], 12);

  Result<WorkerMessage> stage = DecodeWorkerMessage(R"({"type":"stage","id":"4","stage":"audit"})");
  ASSERT_TRUE(stage.ok());
  EXPECT_EQ(stage->type, WorkerMessage::Type::kStage);
  EXPECT_EQ(stage->id, "4");
  EXPECT_EQ(stage->stage, "audit");

  Result<WorkerMessage> lease = DecodeWorkerMessage(R"({"type":"lease","id":"4","op":"acquire"})");
  ASSERT_TRUE(lease.ok());
  EXPECT_TRUE(lease->lease_acquire);
  lease = DecodeWorkerMessage(R"({"type":"lease","id":"4","op":"release"})");
  ASSERT_TRUE(lease.ok());
  EXPECT_FALSE(lease->lease_acquire);

  Result<WorkerMessage> result = DecodeWorkerMessage(
      R"({"type":"result","id":"4","result":{"status":"ok"},"worker_poisoned":true})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->type, WorkerMessage::Type::kResult);
  EXPECT_EQ(result->result["status"], "ok");
  EXPECT_TRUE(result->worker_poisoned);
  result = DecodeWorkerMessage(R"({"type":"result","id":"4","result":{}})");
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->worker_poisoned);
}

TEST(ProtocolTest, RejectsInvalidMessages) {
  const char* bad[] = {
      "not json",
      "[1,2]",
      R"({"id":"1"})",
      R"({"type":"bogus","id":"1"})",
      R"({"type":"hello"})",
      R"({"type":"hello","protocol":"1"})",
      R"({"type":"stage","stage":"load"})",
      R"({"type":"stage","id":1,"stage":"load"})",
      R"({"type":"stage","id":"1","stage":"warmup"})",
      R"({"type":"lease","id":"1","op":"steal"})",
      R"({"type":"result","id":"1"})",
      R"({"type":"result","id":"1","result":[]})",
      R"({"type":"result","id":"1","result":{},"worker_poisoned":"yes"})",
      R"({"type":"hello","protocol":99999999999})",
  };
  for (const char* line : bad) {
    Result<WorkerMessage> m = DecodeWorkerMessage(line);
    EXPECT_FALSE(m.ok()) << line;
    EXPECT_EQ(m.status().code(), Status::Code::kProtocol) << line;
  }
  EXPECT_NE(DecodeWorkerMessage(R"({"type":"bogus","id":"1"})").status().message().find("bogus"),
            std::string::npos);
}

}  // namespace
}  // namespace ks
