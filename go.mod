module github.com/altairalabs/promptkit-sandbox

go 1.26
